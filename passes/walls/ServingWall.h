//===- ServingWall.h - Wall 4: serving latency and throughput ---*- C++ -*-===//
#ifndef MLSC_PASSES_WALLS_SERVINGWALL_H
#define MLSC_PASSES_WALLS_SERVINGWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

namespace mlsc::walls {

/// Speculative decoding, k draft tokens accepted with rate alpha in [0, 1]:
/// E = (1 - alpha^(k+1)) / (1 - alpha), k + 1 at alpha = 1. Leviathan et al.
/// 2023.
q::Number speculativeTokensPerStep(q::Number Acceptance, q::Number DraftTokens);

/// Time per output token when one step emits E tokens: TPOT = T_step / E
/// (E = 1 without speculation). Zhong et al., DistServe, OSDI 2024.
q::Time timePerOutputToken(q::Time Step, q::Number TokensPerStep);

/// Speculative decoding time per token: T = (k * T_draft + T_target) / E.
/// Leviathan et al. 2023 (walltime: (k*c + 1) * T_target / E).
q::Time speculativeTimePerToken(q::Time DraftStep, q::Time TargetStep,
                                q::Number DraftTokens, q::Number Acceptance);

/// Chunked prefill: n = ceil(S / C) chunks. Agrawal et al., Sarathi-Serve,
/// OSDI 2024.
q::Number prefillChunks(q::Tokens Prompt, q::Tokens Chunk);

/// One iteration carrying a chunk of C prompt tokens with the decode batch:
/// max(T_prefill * min(C, S) / S, T_decode). Sarathi-Serve, OSDI 2024.
q::Time hybridIterationTime(q::Time Prefill, q::Time DecodeStep,
                            q::Tokens Prompt, q::Tokens Chunk);

/// Prefill time with chunks interleaved with decode: the sum over chunks of
/// max(T_prefill * C_i / S, T_decode). Sarathi-Serve, OSDI 2024.
q::Time chunkedPrefillTime(q::Time Prefill, q::Time DecodeStep,
                           q::Tokens Prompt, q::Tokens Chunk);

/// Generation stalls without chunked prefill: a replica that runs each new
/// request's prefill as its own iteration delays its decode by T_prefill
/// every time one arrives. Prefills arrive at rate r per replica, so a gap
/// between tokens holds N ~ Poisson(r * TPOT) of them, and its p-quantile
/// is TPOT + k * T_prefill with k the Poisson p-quantile. Agrawal et al.,
/// Sarathi-Serve, OSDI 2024, section 2 (generation stalls).
q::Time prefillStallItl(q::Time TPOT, q::Time Prefill, q::RequestRate Rate,
                        q::Number Percentile);

/// Prefill interference: the share of a replica's time that other
/// requests' prefills take from its decode. f = r * T_extra, with r the
/// rate of other requests' prefills and T_extra what each adds to the
/// replica's iterations: its whole prefill when it runs alone, or only the
/// part of its chunks that does not hide under memory-bound decode
/// iterations with chunked prefill. Agrawal et al., Sarathi-Serve, OSDI
/// 2024.
q::Number prefillInterference(q::RequestRate Rate, q::Time ExtraPerRequest);

/// The mean time per output token when a share f of the replica's time goes
/// to other requests' prefills: TPOT / (1 - f); +inf at f >= 1 (prefills
/// alone saturate the replica).
q::Time interferedTokenTime(q::Time TPOT, q::Number Interference);

/// The chance that a gap between tokens holds at least one prefill:
/// 1 - exp(-r * TPOT).
q::Number prefillStallProbability(q::Time TPOT, q::RequestRate Rate);

/// Prefix caching: prompt tokens actually computed = S * (1 - hit rate).
/// Zheng et al., SGLang RadixAttention, NeurIPS 2024.
q::Tokens prefillTokensComputed(q::Tokens Prompt, q::Number HitRate);

/// P/D disaggregation: KV-cache transfer = S * kv / BW_fabric + alpha.
/// Zhong et al., DistServe, OSDI 2024.
q::Time kvTransferTime(q::Tokens Prompt, q::BytesPerToken KV,
                       q::Bandwidth Fabric, q::Time Latency);

/// TTFT = queueing wait + prefill + KV transfer (zero when colocated).
/// Zhong et al., DistServe, OSDI 2024.
q::Time timeToFirstToken(q::Time QueueWait, q::Time Prefill,
                         q::Time KVTransfer);

/// End-to-end latency = TTFT + (output - 1) * TPOT. DistServe, OSDI 2024.
q::Time endToEndLatency(q::Time TTFT, q::Time TPOT, q::Tokens Output);

/// Output tokens per second of one replica with `Concurrency` requests in
/// flight: X = concurrency * output / latency. Little, Oper. Res. 1961.
q::TokenRate replicaThroughput(q::Number Concurrency, q::Tokens Output,
                               q::Time Latency);

/// Output tokens per second per device: X_replica / devices per replica.
q::TokenRate throughputPerDevice(q::TokenRate Replica,
                                 q::Number DevicesPerReplica);

/// Parameters an MoE token uses: dense + top_k / experts * routed-expert
/// params. Shazeer et al. 2017; Fedus et al., Switch Transformer, JMLR 2022.
q::Number moeActiveParams(q::Number DenseParams, q::Number ExpertParams,
                          q::Number TopK, q::Number Experts);

/// Forward FLOPs per token = 2 * active params. Kaplan et al. 2020, Table 1.
q::FlopsPerToken forwardFlopsPerToken(q::Number ActiveParams);

extern const Formula SpeculativeTokensPerStepF, TimePerOutputTokenF,
    SpeculativeTimePerTokenF, PrefillChunksF, HybridIterationTimeF,
    ChunkedPrefillTimeF, PrefillStallItlF, PrefillStallProbabilityF,
    PrefillInterferenceF, InterferedTokenTimeF, PrefillTokensComputedF,
    KVTransferTimeF, TimeToFirstTokenF, EndToEndLatencyF, ReplicaThroughputF,
    ThroughputPerDeviceF, MoEActiveParamsF, ForwardFlopsPerTokenF;

} // namespace mlsc::walls

#endif
