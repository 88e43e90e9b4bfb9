// The runtime's own small status type (the runtime links no Abseil): a code and a message. The
// codes are the C ABI's collage_status_code_t values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace collage::rt {

enum class Code : int32_t {
  ok = 0,
  invalid_argument = 1,  // bad input from the caller: wrong tensor shape, dtype, count
  not_found = 2,         // a file or a runtime module that is not there
  corrupt = 3,           // an artifact that fails a check: truncated, bad checksum, bad field
  unsupported = 4,       // a well-formed artifact this runtime cannot run (version, ABI)
  kernel_failed = 5,     // a kernel reported an error while running
  internal = 6,          // an unexpected failure (out of memory, an exception)
  io = 7,                // reading a file or loading a library failed
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const { return code_ == Code::ok; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The same code with `context + ": "` in front of the message.
  Status prefixed(std::string_view context) const {
    return ok() ? Status() : Status(code_, std::string(context) + ": " + message_);
  }

 private:
  Code code_ = Code::ok;
  std::string message_;
};

// The code of a status a runtime module returned (the error convention of runtime_module.h): a
// collage_status_code_t as it is, anything else (an older module's bare nonzero) as `usual`.
inline Code abi_code(int32_t rc, Code usual) {
  return rc > 0 && rc <= static_cast<int32_t>(Code::io) ? static_cast<Code>(rc) : usual;
}

namespace detail {
inline void append(std::string& s, std::string_view v) {
  s.append(v);
}
inline void append(std::string& s, const char* v) {
  s.append(v ? v : "(null)");
}
inline void append(std::string& s, char c) {
  s.push_back(c);
}
template <typename T>
requires std::is_integral_v<T> &&
    (!std::is_same_v<T, char>)&&(!std::is_same_v<T, bool>)void append(std::string& s, T v) {
  s.append(std::to_string(v));
}
}  // namespace detail

// Concatenates strings and integers for messages.
template <typename... Args>
std::string cat(const Args&... args) {
  std::string s;
  (detail::append(s, args), ...);
  return s;
}

template <typename... Args>
Status error(Code code, const Args&... args) {
  return Status(code, cat(args...));
}

}  // namespace collage::rt

// Returns the status of `expr` from the enclosing function when it is not ok.
#define COLLAGE_RT_RETURN_IF_ERROR(expr)                     \
  do {                                                       \
    ::collage::rt::Status collage_rt_status_ = (expr);       \
    if (!collage_rt_status_.ok()) return collage_rt_status_; \
  } while (0)
