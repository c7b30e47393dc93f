//===- Binding.cpp - Which wall binds an evaluated scenario ---------------===//

#include "runtime/Binding.h"

#include <algorithm>
#include <iterator>

namespace mlsc {

const char *wallShortName(unsigned Number) {
  switch (Number) {
  case 1:
    return "compute";
  case 2:
    return "memory";
  case 6:
    return "weight streaming";
  case 14:
    return "communication";
  }
  return "infeasible";
}

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
    const char *Name;
  } Es[] = {{get(0), 1, "wall 1: compute"},
            {get(1), 2, "wall 2: memory"},
            {get(2), 6, "wall 6: weight streaming"},
            {get(3), 14, "wall 14: communication"}};
  // The largest time and the runner-up, the earlier entry winning ties (a
  // sweep calls this for every point: no sort, no allocation).
  auto largest = [&](int Skip) {
    int Best = -1;
    for (int K = 0; K < 4; ++K)
      if (K != Skip && (Best < 0 || Es[K].T > Es[Best].T))
        Best = K;
    return Best;
  };
  const Entry &A = Es[largest(-1)];
  const Entry &B = Es[largest(&A - Es)];
  BindingWall R;
  R.Known = Times[0] >= 0;
  R.Number = A.Number;
  R.Short = wallShortName(A.Number);
  R.Wall = A.Name;
  R.RunnerUp = wallShortName(B.Number);
  R.Margin = B.T > 0 ? A.T / B.T : 0;
  R.Phase = Phase;
  return R;
}

BindingWall bindingWall(const Evaluator &E, std::string Phase) {
  return BindingProbe(E.graph(), std::move(Phase)).at(E);
}

} // namespace mlsc
