// Running a computation that may crash or hang (a kernel, the reference
// computation of an op) in a child process, as candidates are run: a
// signal or a timeout in it becomes an Error of the caller, never the
// caller's own end.
#ifndef KILN_MEASURE_ISOLATED_CALL_H
#define KILN_MEASURE_ISOLATED_CALL_H

#include "kiln/support/error.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln::measure {

/// Whether a computation runs in a child process, and for how long.
struct Isolation {
  bool enabled = false;
  double timeout_seconds = 600;
  /// The option that sets the timeout, named in the timeout's error.
  std::string timeout_option = "--timeout";
};

/// The bytes `fn` returns, computed in a forked child. A UserError thrown
/// by `fn` comes back as that Error; a signal is a "crashed" Error, an
/// answer later than `timeout_seconds` a "timed-out" Error (the child is
/// killed). `what` names the computation in those messages, e.g. "the
/// reference computation of 'matmul'", and `timeout_option` the option
/// that raises the limit.
Expected<std::string> call_isolated(const std::function<std::string()>& fn, double timeout_seconds,
                                    std::string_view what, std::string_view timeout_option);

/// `fn` as `isolation` says: in a child process (call_isolated, with its
/// timeout and option), or in this one when isolation is off.
Expected<std::string> call_with(const Isolation& isolation, const std::function<std::string()>& fn,
                                std::string_view what);

/// Plain values and strings into bytes, for the answers of call_isolated.
class ByteWriter {
public:
  template <typename T> void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    bytes_.append(s);
  }
  void put_doubles(const std::vector<double>& v) {
    put<std::uint64_t>(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  }
  std::string take() && { return std::move(bytes_); }

private:
  std::string bytes_;
};

/// Reads what a ByteWriter wrote; a short or damaged answer is an assertion
/// (both ends are this process's code).
class ByteReader {
public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T> T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }
  std::string get_string() { return std::string(take(get<std::uint64_t>())); }
  std::vector<double> get_doubles() {
    std::uint64_t n = get<std::uint64_t>();
    KILN_ASSERT(n <= bytes_.size() / sizeof(double), "short isolated answer");
    std::vector<double> v(n);
    std::memcpy(v.data(), take(n * sizeof(double)).data(), n * sizeof(double));
    return v;
  }

private:
  std::string_view take(std::size_t n) {
    KILN_ASSERT(n <= bytes_.size(), "short isolated answer");
    std::string_view out = bytes_.substr(0, n);
    bytes_.remove_prefix(n);
    return out;
  }
  std::string_view bytes_;
};

} // namespace kiln::measure

#endif
