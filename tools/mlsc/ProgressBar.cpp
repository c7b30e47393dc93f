//===- ProgressBar.cpp - A progress bar on a terminal ---------------------===//

#include "tools/mlsc/Driver.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

namespace mlsc::driver {

std::function<void(size_t, size_t)>
progressBar(std::string Label, std::string Unit, bool Enabled) {
  if (!Enabled)
    return nullptr;
  struct State {
    std::chrono::steady_clock::time_point Start =
        std::chrono::steady_clock::now();
    bool Shown = false;
  };
  auto S = std::make_shared<State>();
  return [S, Label = std::move(Label), Unit = std::move(Unit)](size_t Done,
                                                               size_t Total) {
    double Elapsed = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - S->Start)
                         .count();
    if (Elapsed < 1 && !S->Shown)
      return;
    S->Shown = true;
    constexpr size_t Width = 40;
    size_t Fill = Total ? Width * std::min(Done, Total) / Total : Width;
    llvm::errs() << fmt::format(
        "\r{} [{}{}] {}/{} {}", Label, std::string(Fill, '#'),
        std::string(Width - Fill, ' '), Done, Total, Unit);
    if (Done >= Total)
      llvm::errs() << "\n";
  };
}

} // namespace mlsc::driver
