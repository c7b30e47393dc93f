//===- Queue.cpp - Wall 7: the queue in front of a decoder's slots --------===//
//
// Requests arriving at the workload's rate wait for one of the system's
// slots (replicas x batch): an M/G/c queue whose ln C is computed once and
// read by every TTFT and latency percentile, and, given a P99 latency
// target, the fewest replicas that meet it. At its replica a request's
// prefill then waits behind the prefills queued before it (an M/G/1 queue
// of prefill work; under chunked prefill, of the iterations' prompt-token
// budget) and for the iteration in flight, so TTFT grows with the load;
// sized prefill/decode pools queue the prefills in an M/G/c of their own.
// Lengths that vary take their quantiles into the percentiles. Without an
// arrival rate there is no queue, and the percentiles stay unavailable.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Phase.h"
#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerQueue(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  if (!D.Arrival)
    return true;
  NodeId Arrival = *D.Arrival;
  // The lengths' spread (wall 7): the output's is the service time's
  // variability unless `service_cv` is given.
  std::optional<NodeId> PromptCV = Ctx.field(W, "prompt_cv");
  std::optional<NodeId> OutputCV = Ctx.field(W, "output_cv");
  // Outputs cut at `max_output` spread less than their draws.
  NodeId CV = Ctx.orDefault(W, DefaultId::ServiceCV);
  if (OutputCV && !W.field("service_cv")) {
    CV = D.OutputCappedCV.value_or(*OutputCV);
  }
  B.publish(
      MetricId::Utilisation,
      B.apply(FormulaId::Utilisation, {Arrival, D.Service, D.Servers}, ""));
  NodeId Stable =
      B.apply(FormulaId::QueueIsStable, {Arrival, D.Service, D.Servers}, "");
  // The prefills queued at a replica: those of the other requests in its
  // slots (wall 4's interfering prefills; a lone slot has nothing to queue
  // behind, and then the slots' queue is the whole wait). Unchunked,
  // continuous batching on a colocated replica runs them ahead of decode,
  // a request's share of a pass each; chunked, they queue for the
  // iterations' budget of prompt tokens. Static batching prefills a batch
  // at once; a disaggregated replica's prefills run in the prefill pool, a
  // queue of its own when the pools are sized (below).
  std::optional<NodeId> PrefillRate = D.OtherPrefills, PrefillWork, PrefillCV,
                        PrefillRho, Residual, Others, Iteration, EngineRate;
  if (PrefillRate) {
    // A new request waits for the decode iteration in flight. Under
    // pipeline parallelism a replica runs as m = min(pp, batch) engines
    // (vLLM V0's virtual engines), each with its own scheduler; a request
    // is given to one when it arrives and waits for that engine's
    // iteration, which takes the whole step through the stages, and for
    // the prompts queued at it, a 1/m share of the replica's. Chunked, the
    // iterations carry the other requests' chunks too, and are longer by
    // the factor the token gaps are (Sarathi-Serve).
    // Under speculative decoding an iteration is the draft's k steps and
    // the target's verifying step, not a decode step.
    NodeId Step = D.iteration();
    Iteration = Step;
    if (!D.ChunkExtra) {
      // Unchunked under pipeline parallelism the engine's micro-batch in
      // flight may follow another engine's prompt (a convoy): its
      // iterations are the token gaps, longer on average by TPOT_mean /
      // TPOT. Without, the prefills ahead are the queue below.
      NodeId Stretch = B.op(
          Op::Mul, {B.op(Op::Sub, {B.op(Op::Div, {D.MeanTPOT, D.TPOT}),
                                   B.constant(1, "the decode step itself")}),
                    B.op(Op::Gt, {D.Stages, B.constant(1, "one stage")})});
      Iteration = B.op(
          Op::Mul,
          {Step, B.op(Op::Add, {B.constant(1, "the decode step"), Stretch})});
      B.label(*Iteration, "engine_iteration");
    }
    if (D.ChunkExtra) {
      Iteration = B.op(Op::Mul, {Step, B.op(Op::Div, {D.MeanTPOT, D.TPOT})});
      B.label(*Iteration, "mean_iteration");
    }
    Residual = *Iteration;
    EngineRate = B.op(Op::Div, {*PrefillRate, D.Stages});
    B.label(*EngineRate, "engine_prefill_rate");
    // Unchunked, batched up to the token budget: a request's share of a
    // prefill pass, which holds its engine through every stage (m times
    // the share of the replica's capacity it takes). Chunked, the prompts
    // share the iterations' budget of C prompt tokens, first come first
    // served: a prompt of S tokens takes S / C of its engine's iterations,
    // and prompts that fit together enter the same iteration. Those are
    // iterations that carry chunks, as long as the hybrid iteration (its
    // chunk's GEMMs and attention on top of the decode step), not the mean
    // iteration: for a 32k-token prompt in chunks of 2,048 on an 8B model
    // that is 85 ms against 15, and the prompts queued ahead were a sixth
    // of their length (TTFT p99 1.61 s against the simulator's 4.14 s).
    if (D.ChunkExtra) {
      NodeId Carrying =
          B.op(Op::Max, {*Residual, B.G.get(MetricId::HybridIterationTime)});
      B.label(Carrying, "budget_iteration");
      PrefillWork =
          B.op(Op::Mul, {Carrying, B.op(Op::Div, {D.Computed, *D.Chunk})});
      B.label(*PrefillWork, "prompt_budget_share");
    } else {
      PrefillWork = B.op(Op::Mul, {D.PrefillShare, D.Stages});
      B.label(*PrefillWork, "engine_prefill_share");
    }
    PrefillCV = PromptCV ? *PromptCV
                         : B.constant(0, "prompts of one length: the workload "
                                         "gives no prompt_cv");
    NodeId Rho = B.apply(
        FormulaId::Utilisation,
        {*EngineRate, *PrefillWork, B.constant(1, "one prefill at a time")},
        "");
    B.publish(MetricId::PrefillUtilisation, Rho);
    Stable = B.op(Op::And,
                  {Stable, B.op(Op::Lt, {Rho, B.constant(1, "saturation")})});
    // A request that arrives during another's unchunked prefill waits in
    // the queue of prefills, or for the decode iteration in flight: the two
    // exclude each other. Chunked, every arrival waits out the iteration in
    // flight, whatever it carries, and then the budget's queue: prompts
    // shorter than the budget join an iteration beside the ones ahead, so
    // the two are taken apart (taking them as exclusive, as for a prompt
    // that fills its iterations, put the TTFT of MLPerf's Llama-2-70B
    // Server run on H100, 222-token prompts in a 4,096-token budget, 4
    // points further under the published one, v02).
    PrefillRho = D.ChunkExtra ? B.constant(0, "chunks ride on the iteration in "
                                              "flight")
                              : Rho;
    // The other requests running on the request's engine (on the replica
    // without pipeline parallelism): whether an iteration is in flight.
    Others =
        B.op(Op::Div, {B.op(Op::Sub, {B.G.get(MetricId::RunningBatch),
                                      B.constant(1, "the request itself")}),
                       D.Stages});
    B.label(*Others, "other_running_requests");
  }
  // Sized prefill/decode pools (DistServe): the prefill pool is an M/G/c
  // queue of its own, c its replicas each prefilling one request at a
  // time; its wait comes before the first token, the decode pool's after.
  std::optional<NodeId> PoolLogC, PoolCV;
  if (D.PrefillReplicas) {
    NodeId Rho = B.apply(FormulaId::Utilisation,
                         {Arrival, D.RequestPrefill, *D.PrefillReplicas}, "");
    B.publish(MetricId::PrefillUtilisation, Rho);
    Stable = B.op(
        Op::And,
        {Stable, B.apply(FormulaId::QueueIsStable,
                         {Arrival, D.RequestPrefill, *D.PrefillReplicas}, "")});
    PoolLogC = B.apply(FormulaId::LogErlangC,
                       {Arrival, D.RequestPrefill, *D.PrefillReplicas},
                       "prefill_pool.log_erlang_c");
    PoolCV = PromptCV ? *PromptCV
                      : B.constant(0, "prompts of one length: the workload "
                                      "gives no prompt_cv");
  }
  B.publish(MetricId::QueueStable, Stable);
  // ln C(c, a) once; every percentile reads it. On a colocated replica
  // batching continuously every prefill stalls the requests running beside
  // it (a share rho_s of their time, wall 4's interference), so a burst of
  // arrivals also holds the requests already in the slots longer: the
  // count in the slots is more peaked than Poisson (Hayward's form), and
  // a wait for a full slot is longer, as each request admitted ahead
  // stalls the running ones (the wait's CV). The quickstart at 32 slots:
  // 20.7 held on average, rho_s = 0.32, P(wait) 0.75% as Erlang C, 6.2%
  // here and 6.7% in the simulator.
  NodeId StallShare =
      D.StallRate && !D.Static
          ? B.G.get(MetricId::PrefillInterference)
          : B.constant(0, "no prefill stalls the requests running beside it");
  NodeId LogC = B.apply(FormulaId::LogPeakedErlangC,
                        {Arrival, D.Service, D.Servers, StallShare},
                        "queue.log_erlang_c");
  // A static batch admits no one until it ends: the share that waits is
  // the share of the time a replica is busy, lambda_r T / b.
  if (D.StaticAtLoad) {
    const DecoderState::StaticLoad &S = *D.StaticAtLoad;
    B.publish(MetricId::SlotWaitProbability,
              B.apply(FormulaId::StaticBatchBusyShare,
                      {S.Rate, S.Prefill, S.Step, S.Batch, D.OutputDrawn, S.CV,
                       S.Cap},
                      ""));
  } else {
    B.publish(MetricId::SlotWaitProbability, B.op(Op::Exp, {LogC}));
  }
  NodeId SlotCV =
      B.apply(FormulaId::FullSlotsWaitCV,
              {Arrival, D.Service, D.Servers, CV, StallShare}, "queue.wait_cv");
  struct Percentile {
    double P;
    const char *Name;
    MetricId Ttft, Latency;
  };
  const Percentile Percentiles[] = {
      {0.5, "p50", MetricId::TtftP50, MetricId::LatencyP50},
      {0.9, "p90", MetricId::TtftP90, MetricId::LatencyP90},
      {0.99, "p99", MetricId::TtftP99, MetricId::LatencyP99},
      {0.999, "p999", MetricId::TtftP999, MetricId::LatencyP999}};
  // A request's first token at each percentile's own prompt: computed for
  // every level first, as the TTFT of each reads the median's and the
  // 99th percentile's to carry the prompt's spread.
  struct LevelFirst {
    NodeId At, FirstToken, First;
    std::optional<NodeId> PromptExtra;
  };
  LevelFirst Levels[std::size(Percentiles)];
  NodeId LevelComputed[std::size(Percentiles)];
  for (size_t I = 0; I < std::size(Percentiles); ++I) {
    const Percentile &P = Percentiles[I];
    NodeId Level = B.constant(P.P, "the percentile");
    // Lengths that vary: a request at the percentile has the prompt's
    // lognormal quantile, its prefill run at its own prompt (the same
    // kernel classes: the weights read once whatever the length, the
    // GEMMs in proportion, attention faster than linear; in its own chunks
    // when chunks ride on the decodes; its KV cache sent to the decode
    // pool under disaggregation) and its gaps at the mean time per token.
    NodeId FirstToken = D.FirstToken, Computed = D.Computed;
    std::optional<NodeId> PromptExtra;
    if (PromptCV && !D.Static) {
      NodeId Prompt =
          B.apply(FormulaId::LengthQuantile, {D.Prompt, *PromptCV, Level}, "");
      std::string Label = std::string("request_prefill_at_") + P.Name;
      // A prefix cache skips the same share of every prompt.
      Computed = B.op(Op::Mul, {Prompt, B.op(Op::Div, {D.Computed, D.Prompt})});
      B.label(Computed, Label + ".tokens");
      PhaseWork Work = decoderWork(
          Ctx, PhaseId::RequestPrefill, DecoderPass::Prefill,
          DecoderShape{D.ComputeParams, D.Layers, D.AttnDim, D.KV, D.KVShards,
                       D.Groups},
          weightsRead(Ctx, Computed, std::nullopt),
          B.constant(1, "one sequence"), Computed, Computed, D.TP, Label);
      PhaseTimes Parts = lowerHiddenPhase(Ctx, PhaseId::RequestPrefill,
                                          D.Machine, Work, Label);
      NodeId At = Parts.Step;
      NodeId Mean = D.RequestPrefill;
      if (D.ChunksRide) {
        NodeId Carried = chunkCarried(Ctx, Parts, D.PrefillCommLatency);
        B.label(Carried, Label + ".chunk_carried_time");
        At = chunksOnStep(Ctx, At, D.Decode, Computed, *D.Chunk,
                          /*Hybrid=*/false, Carried);
        B.label(At, Label + ".chunked_time");
        Mean = B.G.get(MetricId::RequestChunkedPrefillTime);
      }
      NodeId Extra = B.op(Op::Sub, {At, Mean});
      if (D.TransferRate) {
        NodeId Transfer = B.apply(
            FormulaId::KVTransferTime,
            {Prompt, *D.TransferShard, *D.TransferRate, *D.TransferLatency},
            Label + ".kv_transfer_time");
        Extra = B.op(
            Op::Add,
            {Extra, B.op(Op::Sub, {Transfer,
                                   B.G.get(MetricId::RequestKVTransferTime)})});
      }
      B.label(Extra, Label + ".extra");
      FirstToken = B.op(Op::Add, {D.FirstToken, Extra});
      B.label(FirstToken, Label + ".first_token_time");
      PromptExtra = Extra;
    }
    Levels[I] = {Level, FirstToken, FirstToken, PromptExtra};
    LevelComputed[I] = Computed;
  }
  // Chunked, the iterations to the first token also carry the chunks of
  // the requests that arrive meanwhile, in the budget its own leave; with
  // prompts that vary, the quantile of the two together (the first
  // token's own time through its median and 99th percentile).
  if (D.ChunkExtra && PrefillRate) {
    NodeId NoSpread = B.constant(0, "prompts of one length");
    for (size_t I = 0; I < std::size(Percentiles); ++I)
      Levels[I].First = B.apply(
          FormulaId::ChunkedFirstTokenQuantile,
          {Levels[I].FirstToken, *D.ChunkExtra, *EngineRate, *Iteration,
           LevelComputed[I], *D.Chunk, Levels[I].At, Levels[0].FirstToken,
           Levels[2].FirstToken, PromptCV && !D.Static ? *PromptCV : NoSpread},
          "");
  }
  // A dispatcher that batches requests (`batcher.window`): a request waits
  // in it for its batch (at each percentile, added to the other parts'),
  // and the batch's prompts reach one replica together: unchunked, a
  // request's first token comes at the end of its pass
  // (batcher.first_token_time, lowerRunningBatch); chunked, after the
  // prompts ahead of it in the budget's queue, (K - 1) / 2 on average. The
  // replica's prefills queue as batches, K times rarer and K times longer
  // (a sum of a varying count of prompts: squared CV cs^2 / K + Var(K) /
  // K^2), whose arrivals are the batcher's gaps spread over the engines
  // at random as single requests are (ca^2 = c_gap^2 / E + 1 - 1 / E:
  // Poisson again for one request a batch): Kingman's (ca^2 + cs^2) in the
  // M/G/1 forms, the work and the rate scaled by (ca^2 + cs^2) / (1 +
  // cs^2), which leaves rho as it was.
  std::optional<NodeId> SameBatch, BatchArrivalCV2, BatchSizeCV2;
  if (D.Batcher && D.BatcherSequences && PrefillRate) {
    const DecoderState::BatcherInputs &Bt = *D.Batcher;
    NodeId K = *D.BatcherSequences;
    NodeId Rest = B.op(Op::Sub, {K, B.constant(1, "the request")});
    SameBatch =
        D.BatcherFirstToken
            ? B.op(Op::Max,
                   {B.op(Op::Sub, {*D.BatcherFirstToken, D.RequestPrefill}),
                    Ctx.none("s", "0 s", "no longer than its own")})
            : B.op(Op::Mul,
                   {B.op(Op::Mul,
                         {*PrefillWork, B.constant(0.5, "half of the others "
                                                        "ahead")}),
                    Rest});
    B.label(*SameBatch, "batcher.same_batch_prefill");
    BatchSizeCV2 = B.apply(FormulaId::BatcherSizeCV2,
                           {*Bt.Rate, Bt.Window, Bt.MaxRequests}, "");
    NodeId Cs2 = B.op(
        Op::Add, {B.op(Op::Div, {B.op(Op::Mul, {*PrefillCV, *PrefillCV}), K}),
                  *BatchSizeCV2});
    B.label(Cs2, "batcher.batch_prefill_cv2");
    NodeId Engines = B.op(Op::Mul, {D.Replicas, D.Stages});
    NodeId One = B.constant(1, "one");
    NodeId Ca2 =
        B.op(Op::Add,
             {B.op(Op::Div, {B.apply(FormulaId::BatcherGapCV2,
                                     {*Bt.Rate, Bt.Window, Bt.MaxRequests}, ""),
                             Engines}),
              B.op(Op::Sub, {One, B.op(Op::Div, {One, Engines})})});
    B.label(Ca2, "batcher.batch_arrival_cv2");
    BatchArrivalCV2 = Ca2;
    NodeId Factor =
        B.op(Op::Div, {B.op(Op::Add, {Ca2, Cs2}), B.op(Op::Add, {One, Cs2})});
    B.label(Factor, "batcher.kingman_factor");
    NodeId Scale = B.op(Op::Mul, {K, Factor});
    EngineRate = B.op(Op::Div, {*EngineRate, Scale});
    B.label(*EngineRate, "batcher.engine_batch_rate");
    PrefillWork = B.op(Op::Mul, {*PrefillWork, Scale});
    B.label(*PrefillWork, "batcher.batch_prefill_work");
    PrefillCV = B.op(Op::Sqrt, {Cs2});
  }
  // The parts of a TTFT that are not its own first token: the wait for a
  // slot (for the prefill pool's replicas when the pools are sized), for
  // the prefills queued ahead and for the iteration in flight; zeros where
  // a part does not apply.
  NodeId NoTime = Ctx.none("s", "0 s", "no such wait");
  NodeId NoRate = Ctx.none("req/s", "0 req/s", "no other prefills");
  NodeId None = B.constant(0, "no such wait");
  NodeId SpreadCV = PromptCV && !D.Static
                        ? *PromptCV
                        : B.constant(0, "prompts of one length");
  const NodeId SlotQueue[] = {PoolLogC ? *PoolLogC : LogC, Arrival,
                              PoolLogC ? D.RequestPrefill : D.Service,
                              PoolLogC ? *D.PrefillReplicas : D.Servers,
                              PoolLogC ? *PoolCV : SlotCV};
  auto FirstOf = [&](const LevelFirst &L) {
    return PoolLogC ? L.FirstToken : L.First;
  };
  // A request's time outside the engine's steps (the HTTP server, the
  // prompt's tokenization, the hops to and from the engine's process):
  // once in its TTFT and its latency as a client measures them, in no
  // step and no queue.
  NodeId Front = Ctx.orDefault(W, DefaultId::RequestOverhead);
  // What the lengths' spread adds to the P99 (a longer prompt's prefill,
  // a longer output's decode), beyond the slots' queue and the mean
  // service.
  std::optional<NodeId> Spread99, Batcher99;
  for (size_t I = 0; I < std::size(Percentiles); ++I) {
    const Percentile &P = Percentiles[I];
    const LevelFirst &L = Levels[I];
    NodeId Ttft, Latency;
    if (D.StaticAtLoad) {
      // Static batching at load: the wait for the batch in flight to end,
      // then the request's own batch, prefilled together (its first token)
      // and decoded to the batch's longest output (its completion), each
      // batch's time random with its longest output.
      const DecoderState::StaticLoad &S = *D.StaticAtLoad;
      NodeId Wait = B.apply(FormulaId::StaticBatchWaitQuantile,
                            {S.Rate, S.Prefill, S.Step, S.Batch, S.Slots,
                             D.OutputDrawn, S.CV, S.Cap, L.At},
                            std::string("static.wait.") + P.Name);
      // Disaggregated, the prompt's KV cache then crosses to the decode
      // replica before the first token.
      if (D.TransferRate)
        Wait = B.op(Op::Add, {Wait, B.G.get(MetricId::RequestKVTransferTime)});
      Ttft = B.op(Op::Add, {Wait, S.Prefill});
      // The wait and the batch's time each at the percentile: above their
      // sum's quantile at the upper percentiles, below it at the median.
      Latency = B.op(
          Op::Add, {Wait, B.apply(FormulaId::StaticBatchTimeQuantile,
                                  {S.Prefill, S.Step, S.Batch, D.OutputDrawn,
                                   S.CV, S.Cap, L.At},
                                  std::string("static.batch_time.") + P.Name)});
    } else {
      // The parts added by their moments (an upper bound no longer: at the
      // median the sum of the parts' medians falls below the sum's).
      Ttft = B.apply(
          FormulaId::FirstTokenSumQuantile,
          {FirstOf(L), FirstOf(Levels[0]), FirstOf(Levels[2]), SpreadCV,
           SlotQueue[0], SlotQueue[1], SlotQueue[2], SlotQueue[3], SlotQueue[4],
           EngineRate ? *EngineRate : NoRate,
           PrefillWork ? *PrefillWork : NoTime, PrefillCV ? *PrefillCV : None,
           Residual ? *Residual : NoTime, PrefillRho ? *PrefillRho : None,
           Others ? *Others : None, L.At},
          "");
      Latency =
          B.apply(FormulaId::LatencyQuantileGiven,
                  {LogC, Arrival, D.Service, D.Servers, SlotCV, L.At}, "");
    }
    if (PoolLogC) {
      // The prefill pool's wait, then the first token; the decode pool's
      // wait and decode follow it.
      NodeId Wait =
          B.op(Op::Sub, {B.apply(FormulaId::LatencyQuantileGiven,
                                 {*PoolLogC, Arrival, D.RequestPrefill,
                                  *D.PrefillReplicas, *PoolCV, L.At},
                                 ""),
                         D.RequestPrefill});
      B.label(Wait, "prefill_pool.wait");
      Latency =
          B.op(Op::Add,
               {B.op(Op::Add, {Wait, B.G.get(MetricId::RequestPrefillTime)}),
                Latency});
    }
    // The latency's own first token is the mean request's (the service
    // time's); the percentile's prompt adds its difference.
    bool At99 = P.Latency == MetricId::LatencyP99;
    if (L.PromptExtra) {
      Latency = B.op(Op::Add, {Latency, *L.PromptExtra});
      if (At99)
        Spread99 = *L.PromptExtra;
    }
    if (OutputCV && !D.Static) {
      // Drawn about the uncut mean, cut at the cap.
      NodeId Output = B.apply(FormulaId::LengthQuantile,
                              {D.OutputDrawn, *OutputCV, L.At}, "");
      if (D.OutputCap)
        Output = B.op(Op::Min, {Output, *D.OutputCap});
      NodeId Extra = B.apply(FormulaId::OutputQuantileExtraDecode,
                             {Output, D.Output, D.MeanTPOT},
                             "output_quantile_extra_decode");
      Latency = B.op(Op::Add, {Latency, Extra});
      if (At99)
        Spread99 = Spread99 ? B.op(Op::Add, {*Spread99, Extra}) : Extra;
    }
    // The other requests' prefills that land in its decode: a Poisson
    // count, taken at the percentile (its TPOT per request there, less
    // the mean the service holds, over its gaps).
    if (D.StallRate && !D.Static) {
      NodeId Stalls = B.apply(FormulaId::RequestStallSpread,
                              {D.TPOT, D.MeanTPOT, *D.StallExtra, *D.StallRate,
                               *D.StallChain, D.Output, L.At},
                              "");
      // Behind a batcher the prompts come in batches of K: the count of
      // batches in a decode is a renewal count, its variance its mean
      // times the gaps' squared CV c_a^2 at an engine (Cox, Renewal
      // Theory, 1962), and each brings a random K (squared CV c_K^2), so
      // the prompts' count N has Var N = E[batches] E[K]^2 (c_a^2 +
      // c_K^2). Unchunked the stalls are counted by batch (a Poisson
      // count of batches of the mean size): the spread scales by
      // sqrt(c_a^2 + c_K^2); chunked, by prompt (Poisson, Var = E[N]): by
      // sqrt(E[K] (c_a^2 + c_K^2)).
      if (BatchArrivalCV2 && BatchSizeCV2) {
        NodeId Var = B.op(Op::Add, {*BatchArrivalCV2, *BatchSizeCV2});
        if (D.Chunk)
          Var = B.op(Op::Mul, {Var, *D.BatcherSequences});
        Stalls = B.op(Op::Mul, {Stalls, B.op(Op::Sqrt, {Var})});
      }
      B.label(Stalls, std::string("latency.stall_spread.") + P.Name);
      Latency = B.op(Op::Add, {Latency, Stalls});
      if (At99)
        Spread99 = Spread99 ? B.op(Op::Add, {*Spread99, Stalls}) : Stalls;
    }
    // The latency's waits behind other prefills and for the iteration in
    // flight, each at the same percentile (an upper bound on the quantile
    // of their sum at the upper percentiles).
    if (PrefillRate) {
      NodeId Wait = B.apply(FormulaId::PrefillWaitQuantile,
                            {*EngineRate, *PrefillWork, *PrefillCV, L.At}, "");
      Wait = B.op(Op::Add,
                  {Wait, B.apply(FormulaId::IterationResidualQuantile,
                                 {*Residual, *PrefillRho, *Others, L.At}, "")});
      Latency = B.op(Op::Add, {Latency, Wait});
    }
    // What no engine could remove: the request's time outside it and its
    // wait in the batcher at this percentile (what a solve names when it
    // alone exceeds a target).
    NodeId Outside = B.op(
        Op::Add, {Front, Ctx.none("s", "0 s", "no batcher: no wait in one")});
    if (D.Batcher && D.Batcher->Rate) {
      NodeId Batcher = B.apply(
          FormulaId::BatcherWaitQuantile,
          {*D.Batcher->Rate, D.Batcher->Window, D.Batcher->MaxRequests, L.At},
          "");
      Outside = B.op(Op::Add, {Front, Batcher});
      if (SameBatch)
        Batcher = B.op(Op::Add, {Batcher, *SameBatch});
      Ttft = B.op(Op::Add, {Ttft, Batcher});
      Latency = B.op(Op::Add, {Latency, Batcher});
      if (At99)
        Batcher99 = Batcher;
    }
    B.label(Outside, std::string("outside_engine.") + P.Name);
    B.publish(P.Ttft, B.op(Op::Add, {Ttft, Front}));
    B.publish(P.Latency, B.op(Op::Add, {Latency, Front}));
  }
  // Sizing: the fewest replicas of `batch` slots whose P99 meets a target.
  // The slots' queue is searched over the replica count; a P99 request's
  // longer prompt and output (the lengths' spread, at the scenario's own
  // time per token) and the request's time outside the engine leave it
  // that much less of the target. The waits at a replica (behind
  // prefills, for the iteration in flight) are not in the search.
  if (std::optional<NodeId> Target = Ctx.field(W, "latency_target")) {
    NodeId Left = B.op(Op::Sub, {*Target, Front});
    if (Spread99)
      Left = B.op(Op::Sub, {Left, *Spread99});
    if (Batcher99)
      Left = B.op(Op::Sub, {Left, *Batcher99});
    if (D.StaticAtLoad) {
      // Static batching: each count's own batch, its wait for the batch in
      // flight and its batch to the longest output (the latency's parts
      // above), the replicas taking the arrivals evenly; a disaggregated
      // prompt's KV transfer also comes before its first token.
      if (D.TransferRate)
        Left = B.op(Op::Sub, {Left, B.G.get(MetricId::RequestKVTransferTime)});
      B.label(Left, "latency_target_for_the_batches");
      std::vector<NodeId> Args = D.StaticAtLoad->AtLoadArgs;
      Args[DecoderState::StaticLoad::AtLoadRate] = Arrival;
      Args.push_back(Left);
      B.publish(MetricId::ReplicasNeeded,
                B.apply(FormulaId::StaticReplicasForP99Latency, Args,
                        "static.replicas_needed"));
      return true;
    }
    B.label(Left, "latency_target_for_the_slots");
    // The arrivals' own stalls and service: past capacity the given
    // replicas admit fewer prompts than arrive, where the counts searched
    // would take them all.
    NodeId Slots =
        B.apply(FormulaId::ServersForP99Latency,
                {Arrival, D.OfferedService.value_or(D.Service), CV, Left,
                 D.OfferedStallShare.value_or(StallShare), D.Servers},
                "servers_needed");
    B.publish(MetricId::ReplicasNeeded,
              B.op(Op::Ceil, {B.op(Op::Div, {Slots, D.Batch})}));
  }
  return true;
}

} // namespace mlsc
