#include "corpus.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace wordvec {

namespace {

std::string read_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path + " (is its Debian package installed?)");
  std::string data;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) data.append(buf, static_cast<size_t>(n));
  gzclose(f);
  if (n < 0) throw std::runtime_error("cannot decompress " + path);
  return data;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path + " (is its Debian package installed?)");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Paragraphs are separated by blank (whitespace-only) lines.
std::vector<std::string> split_paragraphs(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
    } else {
      current += line;
      current += '\n';
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}

// GCIDE accent codes: [a^] [=e] [~n] [.a] ["o] [`e] [^o] stand for one accented letter; [ae] and
// [oe] are ligatures. Returns the plain letters to keep, or "" to drop the bracket.
std::string accent_letters(const std::string& code) {
  if (code == "ae" || code == "oe") return code;
  if (code == "imac") return "i";
  if (code == "aum") return "a";
  static const std::string kAccentMarks = "^=~.\"`':";
  std::string letters;
  bool has_mark = false;
  for (char c : code) {
    if (kAccentMarks.find(c) != std::string::npos)
      has_mark = true;
    else if (std::isalpha(static_cast<unsigned char>(c)))
      letters += c;
    else
      return "";
  }
  return has_mark && letters.size() <= 2 ? letters : "";
}

}  // namespace

void split_words(const std::string& text, std::vector<std::string>& out) {
  std::string word;
  auto flush = [&] {
    while (!word.empty() && word.back() == '\'') word.pop_back();
    if (word.size() > 2 && word.compare(word.size() - 2, 2, "'s") == 0)
      word.resize(word.size() - 2);
    // Single letters other than "a" and "i" are mostly GCIDE part-of-speech labels (n., v. t.).
    if (word.size() > 1 || word == "a" || word == "i") out.push_back(word);
    word.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
    if (is_lower(c)) {
      word += c;
    } else if (c == '\'' && !word.empty() && i + 1 < text.size() &&
               is_lower(static_cast<char>(std::tolower(static_cast<unsigned char>(text[i + 1]))))) {
      word += c;  // internal apostrophe: don't, o'clock
    } else if (!word.empty()) {
      flush();
    }
  }
  if (!word.empty()) flush();
}

std::string strip_gcide_markup(const std::string& p) {
  std::string out;
  out.reserve(p.size());
  int bracket_depth = 0, paren_depth = 0;
  bool in_pronunciation = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (in_pronunciation) {
      if (c == '\\') in_pronunciation = false;
      continue;
    }
    if (c == '[') {
      size_t close = p.find(']', i);
      if (bracket_depth == 0 && close != std::string::npos && close - i <= 6) {
        std::string code = p.substr(i + 1, close - i - 1);
        if (code.find(' ') == std::string::npos) {
          out += accent_letters(code);
          i = close;
          continue;
        }
      }
      ++bracket_depth;
      continue;
    }
    if (c == ']') {
      if (bracket_depth > 0) --bracket_depth;
      out += ' ';
      continue;
    }
    if (bracket_depth > 0) continue;
    if (c == '(') {
      ++paren_depth;
      continue;
    }
    if (c == ')') {
      if (paren_depth > 0) --paren_depth;
      out += ' ';
      continue;
    }
    if (paren_depth > 0) continue;
    if (c == '\\') {
      in_pronunciation = true;
      out += ' ';
      continue;
    }
    // "--Shak." attributions run to the end of the line; "-- " is a plain dash.
    if (c == '-' && i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ' ' && p[i + 2] != '-') {
      size_t eol = p.find('\n', i);
      i = eol == std::string::npos ? p.size() : eol;
      out += '\n';
      continue;
    }
    if (c == '{' || c == '}') {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

long read_gcide(const std::string& path, const DocumentSink& sink) {
  long docs = 0;
  std::vector<std::string> words;
  for (const std::string& para : split_paragraphs(read_gzip(path))) {
    words.clear();
    split_words(strip_gcide_markup(para), words);
    if (!words.empty()) sink(words), ++docs;
  }
  return docs;
}

long read_devil(const std::string& path, const DocumentSink& sink) {
  long docs = 0;
  std::vector<std::string> words;
  for (const std::string& para : split_paragraphs(read_gzip(path))) {
    words.clear();
    split_words(para, words);
    if (!words.empty()) sink(words), ++docs;
  }
  return docs;
}

long read_wordnet(const std::string& dir, const DocumentSink& sink) {
  long docs = 0;
  std::vector<std::string> words;
  for (const char* part : {"noun", "verb", "adj", "adv"}) {
    std::istringstream in(read_file(dir + "/data." + part));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == ' ') continue;  // licence header lines start with spaces
      // offset lex_filenum ss_type w_cnt(hex) {word lex_id}… pointers… | gloss
      std::istringstream fields(line);
      std::string offset, lex_file, ss_type, count_hex;
      fields >> offset >> lex_file >> ss_type >> count_hex;
      int count = static_cast<int>(std::strtol(count_hex.c_str(), nullptr, 16));
      std::string text;
      for (int w = 0; w < count; ++w) {
        std::string lemma, lex_id;
        fields >> lemma >> lex_id;
        std::replace(lemma.begin(), lemma.end(), '_', ' ');
        text += lemma + " , ";
      }
      size_t bar = line.find(" | ");
      if (bar != std::string::npos) text += line.substr(bar + 3);
      words.clear();
      split_words(text, words);
      if (!words.empty()) sink(words), ++docs;
    }
  }
  return docs;
}

long read_fortunes(const std::string& dir, const DocumentSink& sink) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::string ext = e.path().extension().string();
    if (ext == ".dat" || ext == ".u8") continue;
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());  // directory order is not stable; output must be
  long docs = 0;
  std::vector<std::string> words;
  for (const std::string& file : files) {
    std::istringstream in(read_file(file));
    std::string line, cookie;
    auto flush = [&] {
      words.clear();
      split_words(cookie, words);
      if (!words.empty()) sink(words), ++docs;
      cookie.clear();
    };
    while (std::getline(in, line)) {
      if (line == "%")
        flush();
      else
        cookie += line + '\n';
    }
    flush();
  }
  return docs;
}

}  // namespace wordvec
