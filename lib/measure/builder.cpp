#include "kiln/measure/builder.h"

#include "kiln/schedule/lower.h"
#include "kiln/support/stopwatch.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace kiln::measure {

struct Builder::Impl {
  std::vector<std::unique_ptr<codegen::Compiler>> compilers; ///< one per thread
};

Builder::Builder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Builder::~Builder() = default;

Expected<std::unique_ptr<Builder>> Builder::create(const Target& target, int threads) {
  if (threads < 1)
    threads = std::max(1u, std::thread::hardware_concurrency());
  auto impl = std::make_unique<Impl>();
  for (int i = 0; i < threads; ++i) {
    auto compiler = codegen::Compiler::create(target);
    if (!compiler)
      return compiler.error();
    impl->compilers.push_back(std::move(*compiler));
  }
  return std::unique_ptr<Builder>(new Builder(std::move(impl)));
}

int Builder::threads() const {
  return static_cast<int>(impl_->compilers.size());
}

static BuildResult build_one(codegen::Compiler& compiler, const schedule::State& state) {
  Stopwatch clock;
  BuildResult out;
  auto object = catch_user_error([&] { return compiler.compile(schedule::lower(state)); });
  out.seconds = clock.elapsed_ms() / 1e3;
  if (!object) {
    out.error = record::MeasureError::CompileError;
    out.message = object.error().message();
    return out;
  }
  out.object = std::move(*object);
  return out;
}

std::vector<BuildResult> Builder::build(std::span<const schedule::State* const> states) {
  std::vector<BuildResult> results(states.size());
  std::atomic<size_t> next{0};
  auto worker = [&](codegen::Compiler& compiler) {
    for (size_t i = next++; i < states.size(); i = next++)
      results[i] = build_one(compiler, *states[i]);
  };
  size_t n = std::min(states.size(), impl_->compilers.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t)
    pool.emplace_back(worker, std::ref(*impl_->compilers[t]));
  if (n > 0)
    worker(*impl_->compilers[0]);
  for (std::thread& t : pool)
    t.join();
  return results;
}

} // namespace kiln::measure
