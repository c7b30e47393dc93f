//===- Complexity.cpp - Wall 11: the compute of a training run ------------===//
//
// A decoder trained on the workload's `tokens`: the run's training compute
// C = 6 N D (N the active parameters of an MoE model), the compute-optimal
// model size and tokens for that budget (Hoffmann et al. 2022), and the
// run's tokens per parameter to set against them. A budget in `steps`
// counts steps x global batch x seq tokens. A workload that gives neither
// has no run to size: the metrics are listed as not computed.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

bool lowerComplexity(LoweringContext &Ctx) {
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  std::optional<NodeId> Tokens = Ctx.field(W, "tokens");
  // A budget in steps: each step takes the global batch of seq tokens.
  std::optional<NodeId> Steps = Ctx.field(W, "steps");
  std::optional<NodeId> Seq = Ctx.field(W, "seq");
  if (!Tokens && Steps && Seq) {
    if (std::optional<NodeId> Batch = Ctx.field(W, "global_batch"))
      Tokens =
          B.op(graph::Op::Mul, {*Steps, B.op(graph::Op::Mul, {*Batch, *Seq})});
    else if (std::optional<NodeId> BatchTokens =
                 Ctx.field(W, "global_batch_tokens"))
      Tokens = B.op(graph::Op::Mul, {*Steps, *BatchTokens});
    if (Tokens)
      B.label(*Tokens, W.Name + ".tokens_from_steps");
  }
  if (!Tokens)
    return true;
  std::optional<NodeId> Params = Ctx.field(*Ctx.Model, "active_params");
  if (!Params)
    Params = Ctx.required(*Ctx.Model, "params", "training compute (wall 11)");
  NodeId C = B.apply(FormulaId::TrainingCompute, {*Params, *Tokens}, "");
  B.publish(MetricId::TrainingCompute, C);
  // Chinchilla's 70B parameters on 1.4T tokens: 20 tokens per parameter.
  NodeId Ratio = B.constant(20, "Hoffmann et al. 2022 (arXiv 2203.15556): "
                                "compute-optimal training uses about 20 "
                                "tokens per parameter (Chinchilla: 70B on "
                                "1.4T tokens)");
  B.label(Ratio, "chinchilla_tokens_per_param");
  NodeId NStar = B.apply(FormulaId::ComputeOptimalParams, {C, Ratio}, "");
  B.publish(MetricId::ComputeOptimalParams, NStar);
  B.publish(MetricId::ComputeOptimalTokens,
            B.apply(FormulaId::ComputeOptimalTokens, {NStar, Ratio}, ""));
  B.publish(MetricId::TokensPerParam,
            B.apply(FormulaId::TokensPerParam, {*Tokens, *Params}, ""));
  return true;
}

} // namespace mlsc
