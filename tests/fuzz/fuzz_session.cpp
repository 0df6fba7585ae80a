// Fuzz target: a session document (`--session FILE`, core/session/session.h) as someone might
// send it: any bytes through parse_session, and a session that parses must write back and parse
// again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/session/session.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attnscope;
  const std::string document(reinterpret_cast<const char*>(data), size);
  try {
    const Session session = parse_session(document, "fuzz.attnscope");
    try {
      (void)parse_session(session_to_json(session), "written.attnscope");
    } catch (const Error&) {
      std::abort();  // what attnscope writes it must read back
    }
  } catch (const Error&) {
  }
  return 0;
}
