#pragma once
// The Probe (core/model/intervention.h) of every decoder family: one clean forward pass that keeps
// the residual stream entering each layer, each layer's heads' outputs and its attention output,
// so that an intervention re-runs only from the first layer it touches.
#include <functional>
#include <memory>
#include <string>

#include "core/model/decoder/decoder_network.h"
#include "core/model/intervention.h"

namespace attnscope {

// `tokens` are what the network runs (ids in range, at most max_positions of them); `text_of`
// gives a vocabulary entry's printable text. `backend` must outlive the probe; `owner` keeps
// `network` alive (its model), or is null when the caller does.
std::unique_ptr<Probe> make_decoder_probe(const DecoderNetwork& network, Tokens tokens,
                                          Backend& backend, std::function<std::string(int)> text_of,
                                          std::shared_ptr<const void> owner = nullptr);

}  // namespace attnscope
