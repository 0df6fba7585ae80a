#pragma once
// Typed errors of the core. Each carries a message a user can act on; the app shows it verbatim.
#include <stdexcept>
#include <string>

namespace attnscope {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Bad input from the user (model spec, text options): exit code 2 on the command line.
struct UsageError : Error {
  using Error::Error;
};
// A model folder or file that cannot be read or is malformed.
struct ModelError : Error {
  using Error::Error;
};
// A backend that cannot be created or failed while computing.
struct BackendError : Error {
  using Error::Error;
};

}  // namespace attnscope
