//===- Reasoning.cpp - Wall 12: what an answer costs ----------------------===//
//
// A reasoning workload decodes `reasoning.tokens` thinking tokens before
// each answer and may take `reasoning.samples` samples per answer: the
// inputs step already lengthened every sequence and multiplied the
// arrival rate; here an answer's tokens, latency, energy and cost.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerReasoning(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  graph::Graph &G = B.G;
  if (!D.Thinking && !D.Samples)
    return true;
  const ir::Entity &W = *Ctx.Workload;
  NodeId Samples =
      D.Samples ? *D.Samples : B.constant(1, "one sample an answer");
  NodeId Thinking =
      D.Thinking ? *D.Thinking : Ctx.none("tok", "0 tok", "no thinking");
  NodeId Output = Ctx.required(W, "output", "the decode length");
  // Answers spread and cut at max_output (D.Output is then the cut draws'
  // mean, not the mean they are drawn about): the answer is what remains
  // of it after the thinking tokens.
  if (D.Output != D.OutputDrawn)
    Output = B.op(Op::Sub, {D.Output, Thinking});
  NodeId Tokens =
      B.apply(FormulaId::TokensPerAnswer, {Samples, Thinking, Output}, "");
  B.publish(MetricId::TokensPerAnswer, Tokens);
  if (D.Thinking)
    B.publish(MetricId::ThinkingTokens, *D.Thinking);
  // The first token as a client sees it: after the request's time
  // outside the engine (its server, its tokenizer).
  NodeId First = B.op(
      Op::Add, {D.FirstToken, Ctx.orDefault(W, DefaultId::RequestOverhead)});
  B.publish(
      MetricId::AnswerLatency,
      B.apply(FormulaId::AnswerLatency, {First, D.Output, D.MeanTPOT}, ""));
  if (std::optional<NodeId> PerToken = G.find(MetricId::EnergyPerToken))
    B.publish(MetricId::EnergyPerAnswer, B.op(Op::Mul, {*PerToken, Tokens}));
  if (std::optional<NodeId> PerMtok = G.find(MetricId::CostPerMtok)) {
    NodeId Million =
        Ctx.quantity(1e6, "tok", "1e6 tok", "cost per million tokens");
    B.publish(MetricId::CostPerAnswer,
              B.op(Op::Mul, {B.op(Op::Div, {*PerMtok, Million}), Tokens}));
  }
  return true;
}

} // namespace mlsc
