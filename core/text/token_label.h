#pragma once
// The one label function: what a token looks like wherever attnscope shows it (the window's views,
// SVG/PDF/PNG figures, CSV headers, `heads`). A label is the text the token stands for, never the
// vocabulary's encoding of it:
//   - byte-level pieces (GPT-2, Llama 3, Qwen: "Ġbank", "è¾¹") and SentencePiece pieces with byte
//     fallback (Gemma, Mistral: "▁bank", "<0xE8>") are decoded to their bytes first;
//   - a token holding only part of a character shows that character with the bytes it holds in
//     single guillemets, "边‹1/3›" (byte 1 of 3), "边‹2-3/3›"; bytes that form no character at all
//     show as hex, "‹E8›" — never mojibake, never "�" for bytes we can explain;
//   - a token of white space only shows visible signs: "␣" for a space, "↵" a line break, "⇥" a
//     tab (one sign per character); other control characters show as their Control Pictures (␀);
//   - the leading space of a word ("Ġbank" → "bank") is dropped: views put gaps between tokens;
//   - an empty token shows "∅"; a label longer than `max_chars` characters ends in "…".
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/text/token.h"

namespace attnscope {

// How a tokenizer writes its vocabulary pieces (from its decoder), so a piece can be read back.
enum class PieceEncoding {
  kPlain,          // the piece is the text (lesson words, WordPiece: "##ing" stays "##ing")
  kByteLevel,      // GPT-2's byte-to-character table: "Ġ" is a space, "Ċ" a newline
  kSentencePiece,  // "▁" is a space; "<0xE8>" is the byte E8 (byte fallback)
};

// The trace's name for it (model.pieces): "plain", "byte_level", "sentencepiece".
const char* piece_encoding_name(PieceEncoding encoding);
std::optional<PieceEncoding> parse_piece_encoding(std::string_view name);
// For a trace that does not say (written before model.pieces existed): byte-level when a piece
// uses the table's tell-tale characters (Ġ, Ċ, …), SentencePiece when one holds "▁" or "<0xNN>".
PieceEncoding guess_piece_encoding(const Tokens& tokens);

// The bytes `piece` stands for ("Ġbank" → " bank", "<0xE8>" → "\xE8", "▁bank" → " bank"). The
// result may be part of a UTF-8 character.
std::string piece_bytes(std::string_view piece, PieceEncoding encoding);

// The label of tokens[i]. Neighbours are read to name the character a partial token belongs to.
// Special tokens added by the tokenizer ([CLS], <|begin_of_text|>) are shown as they are.
std::string token_label(const Tokens& tokens, std::size_t i, PieceEncoding encoding,
                        int max_chars = 14);
// The label of free-standing bytes, e.g. a predicted next token's decoded text.
std::string bytes_label(std::string_view bytes, int max_chars = 14);

}  // namespace attnscope
