//===- Binding.h - Which wall binds an evaluated scenario ----------*- C++
//-*-===//
//
// The largest of a phase's times that compete for the binding wall (the
// phase metrics marked Binds in ir/Metrics.def: compute, memory, weight
// streaming, communication, and whatever a new wall adds there) names the
// binding wall; the runner-up gives the margin. The scorecard, solve and
// sweep all use this one rule.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_BINDING_H
#define MLSC_RUNTIME_BINDING_H

#include "runtime/Evaluator.h"

#include <optional>
#include <string>
#include <vector>

namespace mlsc {

struct BindingWall {
  unsigned Number = 0;    ///< the binding wall's number
  const char *Short = ""; ///< "memory"
  const char *RunnerUp = "";
  double Margin = 0; ///< binding time / the runner-up's
  PhaseId Phase = PhaseId::Decode;
  bool Known = false; ///< the graph has the phase's times

  /// "wall 2: memory".
  std::string label() const;
};

/// A wall's name by number ("memory"); "infeasible" for 0, the number a
/// sweep gives a point that does not fit.
const char *wallShortName(unsigned Number);

/// The main phase of a graph: decode for a decoder, batch for a CNN or
/// encoder.
PhaseId mainPhase(const graph::Graph &G);

/// The node ids a binding-wall decision reads, found once per graph so that
/// a sweep can name the binding wall of every point cheaply.
class BindingProbe {
public:
  /// \p Phase none: the main phase.
  explicit BindingProbe(const graph::Graph &G,
                        std::optional<PhaseId> Phase = std::nullopt);
  BindingWall at(const Evaluator &E) const;
  /// The nodes at() reads.
  std::vector<graph::NodeId> nodes() const;

private:
  PhaseId Phase;
  /// Every binding time of the phase in table order, with its wall; a
  /// time the graph lacks counts as zero.
  struct Candidate {
    Wall W;
    std::optional<graph::NodeId> Time;
  };
  std::vector<Candidate> Candidates;
  bool Known = false;
};

/// BindingProbe(E.graph(), Phase).at(E).
BindingWall bindingWall(const Evaluator &E,
                        std::optional<PhaseId> Phase = std::nullopt);

} // namespace mlsc

#endif
