#pragma once
// Writing a file so that a crash, a full disk or a power cut leaves either the old file or the new
// one, never half of each: the bytes go to a temporary file in the same folder, which is flushed
// to disk (fsync) and then renamed over the target (rename is atomic within one file system); the
// folder is fsynced too, so the rename itself survives a power cut. Used by the settings file and
// sessions.
#include <filesystem>
#include <string>

namespace attnscope {

// Writes `content` to `path` atomically, creating the parent folder when missing. Throws Error
// naming the file and the system's reason when any step fails; the temporary file is removed then
// and an existing `path` is left as it was.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace attnscope
