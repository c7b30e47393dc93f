//===- Binding.h - Which wall binds an evaluated scenario ----------*- C++
//-*-===//
//
// The largest of a phase's compute, memory, weight-streaming and
// communication times names the binding wall; the runner-up gives the
// margin. The scorecard, solve and sweep all use this one rule.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_BINDING_H
#define MLSC_RUNTIME_BINDING_H

#include "runtime/Evaluator.h"

#include <string>

namespace mlsc {

struct BindingWall {
  unsigned Number = 0;    ///< 1 compute, 2 memory, 6 streaming, 14 comm
  const char *Short = ""; ///< "memory"
  const char *Wall = "";  ///< "wall 2: memory"
  const char *RunnerUp = "";
  double Margin = 0;  ///< binding time / the runner-up's
  std::string Phase;  ///< "decode" or "batch"
  bool Known = false; ///< the graph has the phase's times
};

/// "compute" (1), "memory" (2), "weight streaming" (6), "communication"
/// (14); "infeasible" for 0, the number a sweep gives a point that does not
/// fit.
const char *wallShortName(unsigned Number);

/// The node ids a binding-wall decision reads, found once per graph so that
/// a sweep can name the binding wall of every point cheaply.
class BindingProbe {
public:
  /// \p Phase empty: the main phase (decode for a decoder, batch for a CNN
  /// or encoder).
  explicit BindingProbe(const graph::Graph &G, std::string Phase = "");
  BindingWall at(const Evaluator &E) const;

private:
  std::string Phase;
  int Times[4]; ///< compute, memory, streaming, communication; -1 if absent
};

/// BindingProbe(E.graph(), Phase).at(E).
BindingWall bindingWall(const Evaluator &E, std::string Phase = "");

} // namespace mlsc

#endif
