//===- Binding.cpp - Which wall binds an evaluated scenario ---------------===//

#include "runtime/Binding.h"

#include <algorithm>
#include <iterator>

namespace mlsc {

BindingProbe::BindingProbe(const graph::Graph &G, std::string P)
    : Phase(std::move(P)) {
  if (Phase.empty())
    Phase = G.find("decode_step_time") >= 0 ? "decode" : "batch";
  const char *Suffix[] = {".compute_time", ".memory_time", ".streaming_time",
                          ".comm_time"};
  for (int K = 0; K < 4; ++K)
    Times[K] = G.find(Phase + Suffix[K]);
}

BindingWall BindingProbe::at(const Evaluator &E) const {
  auto get = [&](int K) {
    return Times[K] < 0 ? 0.0 : E.value(static_cast<uint32_t>(Times[K]));
  };
  struct Entry {
    double T;
    unsigned Number;
    const char *Name, *Short;
  } Es[] = {{get(0), 1, "wall 1: compute", "compute"},
            {get(1), 2, "wall 2: memory", "memory"},
            {get(2), 6, "wall 6: weight streaming", "weight streaming"},
            {get(3), 14, "wall 14: communication", "communication"}};
  std::stable_sort(std::begin(Es), std::end(Es),
                   [](const Entry &A, const Entry &B) { return A.T > B.T; });
  BindingWall R;
  R.Known = Times[0] >= 0;
  R.Number = Es[0].Number;
  R.Short = Es[0].Short;
  R.Wall = Es[0].Name;
  R.RunnerUp = Es[1].Short;
  R.Margin = Es[1].T > 0 ? Es[0].T / Es[1].T : 0;
  R.Phase = Phase;
  return R;
}

BindingWall bindingWall(const Evaluator &E, std::string Phase) {
  return BindingProbe(E.graph(), std::move(Phase)).at(E);
}

} // namespace mlsc
