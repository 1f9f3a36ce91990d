// Fuzz target: the cost model file reader (docs/features.md): a damaged
// file is an Error, never a crash or a hang inside XGBoost's loader.
#include "fuzz_input.h"

#include "kiln/model/xgboost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kiln::fuzz::MemoryFile file(data, size);
  auto model = kiln::model::XGBoostModel::load(file.path());
  if (model)
    (void)model->rounds();
  return 0;
}
