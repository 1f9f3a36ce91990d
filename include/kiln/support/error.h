// Two error channels, as in LLVM and Halide:
//  - kiln::Error / Expected<T>: a problem the user can fix (a malformed op
//    file, a schedule step that cannot apply, a bad option). It has a stable
//    id (one test per id), says what is wrong and what to do, and, when it
//    comes from a text, where.
//  - KILN_ASSERT / kiln_unreachable: a bug in kiln. Never used on user input.
#ifndef KILN_SUPPORT_ERROR_H
#define KILN_SUPPORT_ERROR_H

#include <exception>
#include <string>
#include <utility>
#include <variant>

namespace kiln {

/// A place in a source text; line and column are 1-based, 0 when unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string line_text; ///< the whole source line, for the caret display

  bool valid() const { return line > 0; }
};

/// A problem the user can fix.
class Error {
public:
  Error(std::string id, std::string message, SourceLocation where = {})
      : id_(std::move(id)), message_(std::move(message)), where_(std::move(where)) {}

  /// Stable short name of the kind of error, e.g. "unknown-tensor".
  const std::string& id() const { return id_; }
  /// What is wrong and how to fix it; lower case, no trailing period.
  const std::string& message() const { return message_; }
  const SourceLocation& location() const { return where_; }

  /// `file:line:col: error: message`, then the source line and a caret.
  std::string render() const;

private:
  std::string id_;
  std::string message_;
  SourceLocation where_;
};

/// Carries an Error out of deep library code to the API boundary, where it is
/// caught and returned as an Expected. Never crosses LLVM frames.
class UserError : public std::exception {
public:
  explicit UserError(Error error) : error_(std::move(error)), what_(error_.render()) {}
  const Error& error() const { return error_; }
  const char* what() const noexcept override { return what_.c_str(); }

private:
  Error error_;
  std::string what_;
};

/// Either a value or the Error that prevented it.
template <typename T> class Expected {
public:
  Expected(T value) : storage_(std::move(value)) {}
  Expected(Error error) : storage_(std::move(error)) {}

  explicit operator bool() const { return storage_.index() == 0; }
  bool ok() const { return storage_.index() == 0; }

  T& operator*() & { return std::get<0>(storage_); }
  const T& operator*() const& { return std::get<0>(storage_); }
  T&& operator*() && { return std::get<0>(std::move(storage_)); }
  T* operator->() { return &std::get<0>(storage_); }
  const T* operator->() const { return &std::get<0>(storage_); }
  const Error& error() const { return std::get<1>(storage_); }

  /// The value; throws UserError when there is none (for callers that unwind).
  T take() && {
    if (!ok())
      throw UserError(error());
    return std::get<0>(std::move(storage_));
  }

private:
  std::variant<T, Error> storage_;
};

template <typename T> struct AsExpected { using type = Expected<T>; };
template <typename T> struct AsExpected<Expected<T>> { using type = Expected<T>; };

/// Runs `fn` and turns a UserError thrown inside it into an Expected. `fn`
/// may return a plain value or an Expected.
template <typename Fn> auto catch_user_error(Fn&& fn) -> typename AsExpected<decltype(fn())>::type {
  try {
    return fn();
  } catch (const UserError& e) {
    return e.error();
  }
}

[[noreturn]] void report_internal_error(const char* file, int line, const std::string& why);

} // namespace kiln

/// A condition that only a bug in kiln can break.
#define KILN_ASSERT(cond, why)                                                                     \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::kiln::report_internal_error(__FILE__, __LINE__, std::string(#cond ": ") + (why));          \
  } while (0)

#define kiln_unreachable(why) ::kiln::report_internal_error(__FILE__, __LINE__, why)

#endif // KILN_SUPPORT_ERROR_H
