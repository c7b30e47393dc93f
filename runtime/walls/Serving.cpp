//===- Serving.cpp - Wall 4: serving latency and throughput ---------------===//
//
// The latency and throughput a serving stack adds on top of the roofline
// step times of walls 1 and 2: speculative decoding, chunked prefill,
// prefix caching, prefill/decode disaggregation, TTFT, TPOT, end-to-end
// latency, throughput per replica and per device, and the parameters an MoE
// token activates.
//
// Chunked prefill model (Sarathi-Serve): each iteration carries one chunk of
// C prompt tokens together with the running decode batch. The chunk's GEMMs
// hide under the decode step's weight read as far as the step leaves
// slack (kernels.overlap of it); its attention and the bytes of its
// all-reduces add their share c / S of the prompt's; the iteration is at
// least the chunk's share of the prefill alone. The prefill finishes after
// ceil(S / C) such iterations. The chunk's share is linear in its tokens:
// the growth of attention over later chunks and their re-reading of
// earlier chunks' KV cache are not modelled.
//
// TTFT counts the KV transfer of a disaggregated deployment: the client sees
// the first token when the decode instance streams it (DistServe charges the
// transfer to the decode phase; the end-to-end latency is the same).
//
// MoE: the FLOPs use the model's published `active_params` when it gives
// one (it counts shared experts and routers as the authors do); otherwise
// moeActiveParams, with shared experts counted in the dense parameters.
//
// KV bytes per token with GQA or MQA are MemoryWall's kvBytesPerToken
// (kv_heads < heads; MQA is kv_heads = 1), called with the KV cache's own
// precision; weights use theirs (weightBytesPerDevice) and activations
// theirs (tensorParallelMessage, CommunicationWall.h). Known answers:
// test/unit/ServingTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"
#include "runtime/walls/Lognormal.h"

#include <boost/math/special_functions/erf.hpp>
#include <boost/math/tools/toms748_solve.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace mlsc::walls {

using namespace q;

Number speculativeTokensPerStep(Number Acceptance, Number DraftTokens) {
  double Alpha = Acceptance.value(), K = DraftTokens.value();
  if (Alpha >= 1.0)
    return in<Number>(K + 1.0);
  // expm1/log1p keep 1 - alpha^(k+1) accurate as alpha -> 1, where the
  // direct form loses the digits that the division by 1 - alpha needs.
  return in<Number>(-std::expm1((K + 1.0) * std::log1p(Alpha - 1.0)) /
                    (1.0 - Alpha));
}

Time speculativeTimePerToken(Time DraftStep, Time TargetStep,
                             Number DraftTokens, Number Acceptance) {
  // One target step and k draft steps emit E tokens: TPOT = T_step / E.
  return (DraftTokens * DraftStep + TargetStep) /
         speculativeTokensPerStep(Acceptance, DraftTokens);
}

Number prefillChunks(Tokens Prompt, Tokens Chunk) {
  return in<Number>(std::ceil((Prompt / Chunk).value()));
}

Time chunkPassage(Time ChunkedPrefill, Time DecodeStep, Tokens Prompt,
                  Tokens Chunk) {
  const double Share = (Prompt / Chunk).value();
  const double Unslowed =
      std::max(0.0, std::ceil(Share) - std::max(Share, 1.0));
  return ChunkedPrefill - Unslowed * DecodeStep;
}

Time hybridIterationTime(Time Prefill, Time DecodeStep, Tokens Prompt,
                         Tokens Chunk, Time StepGemm, Time StepWeights,
                         Tokens StepTokens, Time Carried, Number Overlap) {
  if (Prompt <= in<Tokens>(0.0))
    return DecodeStep; // nothing to carry: a prompt found whole in a cache
  Tokens InChunk = std::min(Chunk, Prompt);
  const Time Zero = in<Time>(0.0);
  // The chunk's GEMMs hide under the step's weight read only as far as the
  // read overlaps arithmetic (kernel_class_roofline_time); its attention
  // and communication hide under nothing.
  Time Slack = std::max(Zero, StepWeights - StepGemm);
  Time Gemm = StepGemm * (InChunk / StepTokens);
  Time Added =
      Gemm - Overlap * std::min(Gemm, Slack) + Carried * (InChunk / Prompt);
  return std::max(Prefill * (InChunk / Prompt), DecodeStep + Added);
}

Time chunkedPrefillTime(Time Prefill, Time DecodeStep, Tokens Prompt,
                        Tokens Chunk, Time StepGemm, Time StepWeights,
                        Tokens StepTokens, Time Carried, Number Overlap) {
  if (Prompt <= in<Tokens>(0.0))
    return in<Time>(0.0);
  Number FullChunks = prefillChunks(Prompt, Chunk) - 1.0;
  Tokens Last = Prompt - FullChunks * Chunk;
  return FullChunks * hybridIterationTime(Prefill, DecodeStep, Prompt, Chunk,
                                          StepGemm, StepWeights, StepTokens,
                                          Carried, Overlap) +
         hybridIterationTime(Prefill, DecodeStep, Prompt, Last, StepGemm,
                             StepWeights, StepTokens, Carried, Overlap);
}

Time chunkExtraTime(Time Prefill, Time DecodeStep, Tokens Prompt, Tokens Chunk,
                    Time StepGemm, Time StepWeights, Tokens StepTokens,
                    Number Packed, Time Carried, Number Overlap) {
  const double K = Packed.value();
  if (!(K > 0))
    return in<Time>(std::nan(""));
  Tokens Together = K * Prompt;
  Time Iterations =
      chunkedPrefillTime(K * Prefill, DecodeStep, Together, Chunk, StepGemm,
                         StepWeights, StepTokens, K * Carried, Overlap);
  return (Iterations - prefillChunks(Together, Chunk) * DecodeStep) / K;
}

namespace {

/// The p-quantile of a Poisson count of mean \p Mean, by its cumulative
/// sum; +inf when it is not defined. The sum starts ten standard
/// deviations below the mean (what lies below is under e^-50 of the
/// whole), in logs, so that a large mean (a long output's thousands of
/// stalls) neither underflows nor walks from zero.
double poissonQuantile(double Mean, double P) {
  if (!(Mean >= 0) || !(P < 1) || !std::isfinite(Mean))
    return std::numeric_limits<double>::infinity();
  if (Mean == 0)
    return 0;
  // Past 10^12 the walk would take millions of steps (and past 2^53 a step
  // of one would not move K): the normal approximation with its skew
  // correction, k = mean + z sqrt(mean) + (z^2 - 1) / 6 (Cornish-Fisher),
  // whose error there is far below one count.
  if (Mean > 1e12) {
    double Z = normalQuantile(P);
    return std::floor(Mean + Z * std::sqrt(Mean) + (Z * Z - 1) / 6);
  }
  // The walk is kept for the last mean a thread saw: a scenario asks for
  // the same count at several percentiles (a request's TPOT at two, its
  // latency at four), mostly in rising order, and each picks up where the
  // one before stopped (the same sums in the same order, so the same
  // answer); a new mean, or a lower p, starts again from the first term.
  struct Walk {
    double Mean, StartK, StartTerm, K, Term, Sum, P;
  };
  constexpr double Unset = std::numeric_limits<double>::quiet_NaN();
  thread_local Walk W = {Unset, Unset, Unset, Unset, Unset, Unset, Unset};
  if (Mean != W.Mean) {
    W.Mean = Mean;
    W.StartK = std::max(0.0, std::floor(Mean - 10 * std::sqrt(Mean) - 5));
    W.StartTerm =
        std::exp(-Mean + W.StartK * std::log(Mean) - std::lgamma(W.StartK + 1));
    W.P = Unset;
  }
  if (!(P >= W.P)) {
    W.K = W.StartK;
    W.Term = W.Sum = W.StartTerm;
  }
  W.P = P;
  double Last = Mean + 100 * std::sqrt(Mean) + 100;
  while (W.Sum < P && W.K < Last) {
    W.K += 1;
    W.Term *= Mean / W.K;
    W.Sum += W.Term;
  }
  return W.K;
}

} // namespace

namespace {
/// log Phi(B), B <= 0, through erfc's asymptote where erfc underflows.
double logPhiLow(double B) {
  double Z = -B / std::sqrt(2.0);
  if (Z < 25)
    return std::log(0.5 * std::erfc(Z));
  return std::log(0.5) - Z * Z - std::log(Z * std::sqrt(M_PI)) +
         std::log1p(-0.5 / (Z * Z));
}

/// The distribution function of the inverse Gaussian IG(\p Mu, \p Lambda)
/// at \p X > 0 (below), its second term in logs.
double inverseGaussianCdf(double Mu, double Lambda, double X) {
  double Root = std::sqrt(Lambda / X);
  double A = Root * (X / Mu - 1), B = -Root * (X / Mu + 1);
  return 0.5 * std::erfc(-A / std::sqrt(2.0)) +
         std::exp(2 * Lambda / Mu + logPhiLow(B));
}

/// The p-quantile of the inverse Gaussian IG(\p Mu, \p Lambda), whose
/// distribution function is Phi(sqrt(lambda / x) (x / mu - 1)) + e^{2
/// lambda / mu} Phi(-sqrt(lambda / x) (x / mu + 1)) and density sqrt(lambda
/// / (2 pi x^3)) e^{-lambda (x - mu)^2 / (2 mu^2 x)} (Chhikara and Folks,
/// The Inverse Gaussian Distribution, 1989, eqs. 2.2-2.3), to a thousandth
/// (the caller rounds to a count): Newton's steps from the mean, kept
/// inside a bracket that bisection narrows when a step leaves it. The
/// second term is taken in logs, its Phi through erfc's asymptote where
/// erfc underflows. (Boost's quantile returns NaN for shapes the busy
/// periods reach, lambda / mu under 0.01 or over 100.)
double inverseGaussianQuantile(double Mu, double Lambda, double P,
                               double Guess) {
  auto Cdf = [&](double X) { return inverseGaussianCdf(Mu, Lambda, X); };
  auto Pdf = [&](double X) {
    return std::sqrt(Lambda / (2 * M_PI * X * X * X)) *
           std::exp(-Lambda * (X - Mu) * (X - Mu) / (2 * Mu * Mu * X));
  };
  // The bracket grows from the caller's estimate (the normal one with its
  // skew), so that Newton starts near the root.
  double Lo = 0, Hi = Guess > 0 && std::isfinite(Guess) ? Guess : Mu;
  while (Cdf(Hi) < P && Hi < 1e300) {
    Lo = Hi;
    Hi *= 2;
  }
  double X = Hi;
  for (int I = 0; I < 200 && Hi - Lo > 1e-3 && Hi - Lo > 1e-12 * Hi; ++I) {
    double F = Cdf(X) - P;
    (F < 0 ? Lo : Hi) = X;
    double Step = F / Pdf(X);
    double Next = X - Step;
    if (std::fabs(Step) < 1e-4)
      return Next;
    X = (Next > Lo && Next < Hi) ? Next : 0.5 * (Lo + Hi);
  }
  return 0.5 * (Lo + Hi);
}

/// ln n! for n up to 1,024 (the exact count sums up to 128 terms).
double logFactorial(size_t N) {
  static const std::array<double, 1025> Table = [] {
    std::array<double, 1025> T{};
    for (size_t I = 0; I < T.size(); ++I)
      T[I] = std::lgamma(static_cast<double>(I) + 1);
    return T;
  }();
  return N < Table.size() ? Table[N] : std::lgamma(static_cast<double>(N) + 1);
}

/// The raw moments E[B], E[B^2], E[B^3] of a Borel(rho) count B (the
/// customers an M/D/1 busy period serves), from its cumulants 1 / (1 -
/// rho), rho / (1 - rho)^3, rho (1 + 2 rho) / (1 - rho)^5; a Poisson(m)
/// sum of them has cumulants m E[B^j].
struct BorelMoments {
  double E1, E2, E3;
};
BorelMoments borelMoments(double Rho) {
  const double Q = 1 - Rho, Q3 = Q * Q * Q;
  const double K1 = 1 / Q, K2 = Rho / Q3,
               K3 = Rho * (1 + 2 * Rho) / (Q3 * Q * Q);
  return {K1, K2 + K1 * K1, K3 + 3 * K2 * K1 + K1 * K1 * K1};
}

/// log P(N = n) of Consul's generalized Poisson, m (m + n rho)^(n-1)
/// e^(-m - n rho) / n!, with \p LogM = log m.
double generalizedPoissonLogPmf(double LogM, double M, double Rho, size_t N) {
  const double X = static_cast<double>(N);
  return LogM + (X - 1) * std::log(M + X * Rho) - M - X * Rho - logFactorial(N);
}

/// The inverse Gaussian IG(mu, lambda) shifted to a count's first three
/// cumulants: variance mu^3 / lambda and third cumulant 3 mu^5 / lambda^2
/// give mu = 3 var^2 / kappa_3, lambda = mu^3 / var; the shift takes the
/// mean.
struct ShiftedInverseGaussian {
  double Mu, Lambda, Shift;
};
ShiftedInverseGaussian shiftedInverseGaussian(double Mean, double Var,
                                              double Kappa3) {
  const double Mu = 3 * Var * Var / Kappa3, Lambda = Mu * Mu * Mu / Var;
  return {Mu, Lambda, Mean - Mu};
}

/// The p-quantile of N = B_1 + ... + B_K, K ~ Poisson(\p Mean) and the B_i
/// Borel(\p Rho), the customers an M/D/1 busy period serves (the total
/// progeny of a Poisson(rho) branching process), P(B = j) = e^{-rho j}
/// (rho j)^{j-1} / j!. Rho = 0 is the Poisson count. N is then the total
/// progeny of a branching process started by K ~ Poisson(m) ancestors,
/// Consul's generalized Poisson distribution, P(N = n) = m (m + n rho)^{n-1}
/// e^{-m - n rho} / n! (Consul and Jain, Technometrics 15 (1973); the same
/// sums as Panjer's recursion for the compound count, Panjer, ASTIN
/// Bulletin 12 (1981), in one term each instead of n).
///
/// Summed exactly, in logs, for a mean under 5 or rho over 0.5 while the
/// mean count and three standard deviations stay under 64 (to 128 terms:
/// each an exp and a log, the bulk of a sweep's time when it was 512).
/// Otherwise a continuous law with a continuity correction, through the
/// compound's cumulants m E[B^j] (B's: 1 / (1 - rho), rho / (1 - rho)^3,
/// rho (1 + 2 rho) / (1 - rho)^5, from its cumulant function K(s) = s +
/// rho (e^K(s) - 1)). For rho up to 0.5 (and a mean of 5 or more), the
/// Cornish-Fisher expansion, within one count of the exact sums from the
/// median to the 99.9th percentile for means of 5 to 2,000. Past it,
/// where the expansion fails (4% off at rho 0.9, 10 counts at 0.8), the
/// inverse Gaussian shifted to the same three cumulants (the continuous
/// first-passage law of the branching process: IG(mu, lambda) has
/// variance mu^3 / lambda and third cumulant 3 mu^5 / lambda^2, so mu = 3
/// var^2 / kappa_3, lambda = mu^3 / var, and the shift takes the mean),
/// within one count of the exact sums for means of 0.05 to 600, rho 0.3 to
/// 0.99 and counts of 16 to 181,224 (ServingTest
/// LongBusyPeriodsAreApproximated); the two-cumulant inverse Gaussian was
/// 4% off at rho 0.8.
double busyPeriodCountQuantile(double Mean, double Rho, double P) {
  if (!(Rho > 0))
    return poissonQuantile(Mean, P);
  if (std::isnan(Mean) || std::isnan(Rho) || std::isnan(P))
    return std::nan("");
  if (!(Rho < 1) || !(Mean >= 0) || !(P < 1) || !std::isfinite(Mean))
    return std::numeric_limits<double>::infinity();
  if (Mean == 0 || !(P > 0))
    return 0;
  const auto [K1, E2, E3] = borelMoments(Rho);
  const double Var = Mean * E2, Kappa3 = Mean * E3;
  constexpr size_t MaxTerms = 64;
  if ((Mean < 5 || Rho > 0.5) && Mean * K1 + 3 * std::sqrt(Var) <= MaxTerms) {
    // The walk is kept for the last mean and rho a thread saw, as the
    // Poisson count's is: a scenario asks for several percentiles.
    struct Walk {
      double Mean = std::nan(""), Rho = std::nan(""), LogMean = 0, Cum = 0;
      size_t N = 0;
      double P = std::nan("");
    };
    thread_local Walk W;
    if (W.Mean != Mean || W.Rho != Rho || !(P >= W.P)) {
      W.Mean = Mean;
      W.Rho = Rho;
      W.LogMean = std::log(Mean);
      W.N = 0;
      W.Cum = std::exp(-Mean);
    }
    W.P = P;
    while (W.Cum < P && W.N < 2 * MaxTerms) {
      W.N += 1;
      W.Cum += std::exp(generalizedPoissonLogPmf(W.LogMean, Mean, Rho, W.N));
    }
    if (W.Cum >= P)
      return static_cast<double>(W.N);
  }
  const double Sd = std::sqrt(Var), Skew = Kappa3 / (Var * Sd);
  const double Z = normalQuantile(P);
  const double Normal = Mean * K1 + Sd * (Z + (Z * Z - 1) * Skew / 6);
  // Cornish-Fisher with a continuity correction: within one count of the
  // exact sums at rho <= 0.5, and a tenth of the inverse Gaussian's time.
  if (Mean >= 5 && Rho <= 0.5)
    return std::max(0.0, std::ceil(Normal - 0.5));
  const auto [Mu, Lambda, Shift] =
      shiftedInverseGaussian(Mean * K1, Var, Kappa3);
  const double X =
      Shift + inverseGaussianQuantile(Mu, Lambda, P, Normal - Shift);
  if (std::isnan(X))
    return X;
  return std::max(0.0, std::ceil(X - 0.5));
}
} // namespace

Time prefillStallItl(Time TPOT, Time Prefill, Time Share, RequestRate Rate,
                     RequestRate Chain, Number Percentile) {
  double Mean = (Rate * TPOT / in<Requests>(1.0)).value();
  double Rho = (Chain * Share / in<Requests>(1.0)).value();
  if (std::isnan(Mean) || std::isnan(Rho))
    return in<Time>(std::nan(""));
  double K = busyPeriodCountQuantile(Mean, Rho, Percentile.value());
  if (!std::isfinite(K))
    return in<Time>(K);
  if (K < 1)
    return TPOT;
  // The first prompt of the stall costs its own prefill; the others
  // waiting with it share passes, each its share of one.
  return TPOT + Prefill + (K - 1) * Share;
}

namespace {
/// The p-quantile of T = F + shift(K), F the first token's own time drawn
/// from a shifted lognormal (the prompt's sigma, through F's median and
/// 99th percentile), K a Poisson count of mean \p Mean, shift(k) =
/// min(k, Cap) * Step: the least t with sum_k P(K = k) G(t - shift(k))
/// >= p, by Newton's steps inside a bracket that each evaluation narrows
/// (bisection when a step leaves it). NaN when the mixture has too many
/// branches to sum (the caller then adds the quantiles).
double compoundFirstTokenQuantile(double P, double F50, double F99, double Cv,
                                  double Mean, double Cap, double Step) {
  const ShiftedLognormal Fit = ShiftedLognormal::through(F50, F99, Cv);
  const double Sigma = Fit.Sigma, Scale = Fit.Scale, Offset = Fit.Offset;
  if (!(Scale > 0) || !std::isfinite(Scale))
    return std::nan("");
  // The Poisson weights of the distinct shifts: k = 0 .. ceil(Cap) - 1
  // apart, the rest together; terms past mean + 12 sd + 30 (under 1e-15 of
  // the whole) join the last.
  const double Last =
      std::min(std::ceil(Cap), std::ceil(Mean + 12 * std::sqrt(Mean) + 30));
  if (!(Last <= 256))
    return std::nan("");
  const unsigned Branches = static_cast<unsigned>(Last) + 1;
  double Weight[257], Shift[257];
  double Term = std::exp(-Mean), Sum = 0;
  for (unsigned K = 0; K + 1 < Branches; ++K) {
    Weight[K] = Term;
    Shift[K] = K * Step;
    Sum += Term;
    Term *= Mean / (K + 1);
  }
  Weight[Branches - 1] = std::max(0.0, 1 - Sum);
  Shift[Branches - 1] = std::min(Last, Cap) * Step;
  const double InvSigma = 1 / Sigma, InvSqrt2 = 1 / std::sqrt(2.0),
               InvSqrt2Pi = 1 / std::sqrt(2 * M_PI);
  auto H = [&](double T, double &D) {
    double F = 0;
    D = 0;
    for (unsigned K = 0; K < Branches; ++K) {
      double Y = T - Shift[K] - Offset;
      if (!(Y > 0) || !(Weight[K] > 0))
        continue;
      double U = std::log(Y / Scale) * InvSigma;
      F += Weight[K] * 0.5 * std::erfc(-U * InvSqrt2);
      D += Weight[K] * InvSqrt2Pi * InvSigma * std::exp(-0.5 * U * U) / Y;
    }
    return F;
  };
  // F alone at p is a lower bound (every shift is >= 0), F at p plus the
  // largest shift an upper one.
  double Lo = Fit.quantile(P);
  double Hi = Lo + Shift[Branches - 1];
  if (!(Hi > Lo))
    return Lo;
  double T = Lo + (Hi - Lo) * (1 - Weight[0]);
  for (int I = 0; I < 100 && Hi - Lo > 1e-12 * Hi; ++I) {
    double D, G = H(T, D) - P;
    if (G == 0)
      return T;
    (G > 0 ? Hi : Lo) = T;
    double Next = D > 0 ? T - G / D : std::nan("");
    T = Next > Lo && Next < Hi ? Next : 0.5 * (Lo + Hi);
  }
  return Hi;
}
} // namespace

Time chunkedFirstTokenQuantile(Time FirstToken, Time Extra, RequestRate Rate,
                               Time Iteration, Tokens Prompt, Tokens Chunk,
                               Number Percentile, Time First50, Time First99,
                               Number PromptCV) {
  double S = (Prompt / OneToken).value(), C = (Chunk / OneToken).value();
  if (!(S > 0) || !(C > 0))
    return FirstToken;
  // The other requests' prompts that arrive during the iteration in flight
  // and the request's first N - 1 iterations, and the room its own chunks
  // leave them.
  double N = std::ceil(S / C);
  Time Window = Iteration + (N - 1) / N * FirstToken;
  double Mean = (Rate * Window / in<Requests>(1.0)).value();
  double K = poissonQuantile(Mean, Percentile.value());
  if (!std::isfinite(K))
    return in<Time>(K);
  // Prompts that vary: the first token's own time and the arrivals beside
  // it are apart, so the quantile is the compound's, not the sum of the
  // two quantiles at p (which reads a 99th-percentile prompt beside a
  // 99th-percentile count of arrivals).
  double Cv = PromptCV.value(), F50 = First50.value(), F99 = First99.value(),
         X = Extra.value(), Room = N * C - S;
  if (Cv > 0 && F99 > F50 && std::isfinite(F99) && X > 0 && Room > 0) {
    // The fit runs through F's median and 99th percentile; at the other
    // levels it may pass below the level's own first token (another chunk,
    // attention's growth), which the quantile never is.
    double T = compoundFirstTokenQuantile(Percentile.value(), F50, F99, Cv,
                                          Mean, Room / S, X);
    if (!std::isnan(T))
      return in<Time>(std::max(T, FirstToken.value()));
  }
  double Riding = std::min(K * S, Room);
  return FirstToken + Riding / S * Extra;
}

Time requestTpotQuantile(Time TPOT, Time MeanTPOT, Time Prefill,
                         RequestRate Rate, RequestRate Chain, Tokens Output,
                         Number Percentile) {
  double Gaps = Output / OneToken - 1.0;
  if (!(Gaps >= 1))
    return TPOT; // one output token has no gap
  // The prefills that land in a request's decode, each adding T_prefill
  // to one of its n - 1 gaps: those that arrive during its decode steps,
  // Poisson of mean r (n - 1) TPOT, and those that arrive during the
  // stalls they bring (a busy period each, rho = r_c T_prefill): r (n -
  // 1) TPOT_mean on average, spread wider than a Poisson count of that
  // mean by 1 / (1 - rho)^2 in variance. Unchained (r_c = 0), the Poisson
  // count of mean r (n - 1) TPOT_mean.
  double Rho = (Chain * Prefill / in<Requests>(1.0)).value();
  if (std::isnan(Rho) || std::isnan(MeanTPOT.value()))
    return in<Time>(std::nan(""));
  if (!(Rho < 1))
    return in<Time>(std::numeric_limits<double>::infinity());
  // The prompts given to the request's engine during its own prefill run
  // before its first decode (prompts first): rho (1 - rho) more, as in
  // request_tpot_quantile_spread.
  double Mean =
      (Rate * MeanTPOT / in<Requests>(1.0)).value() * Gaps * (1 - Rho) +
      Rho * (1 - Rho);
  double K = busyPeriodCountQuantile(Mean, Rho, Percentile.value());
  if (!std::isfinite(K))
    return in<Time>(K);
  return TPOT + K * Prefill / Gaps;
}

namespace {
/// request_tpot_quantile_spread's output lengths: equal-probability nodes
/// of the lognormal, as standard normal quantiles at (i + 1/2) / N.
constexpr size_t SpreadNodeCount = 32;
const std::array<double, SpreadNodeCount> &spreadZ() {
  static const std::array<double, SpreadNodeCount> Z = [] {
    std::array<double, SpreadNodeCount> R{};
    for (size_t I = 0; I < SpreadNodeCount; ++I)
      R[I] = std::sqrt(2.0) *
             boost::math::erf_inv(
                 2 * (static_cast<double>(I) + 0.5) / SpreadNodeCount - 1);
    return R;
  }();
  return Z;
}

/// The standard normal CDF by linear interpolation in a table at steps of
/// 1/128 over [-8, 8] (within 2e-6 of erfc's; 0 and 1 outside), so that
/// the mixture's bisection costs no exp per node.
double normalCdfTabled(double Z) {
  constexpr int Steps = 128, Span = 8, Size = 2 * Span * Steps + 1;
  static const std::array<double, Size> Table = [] {
    std::array<double, Size> R{};
    for (int I = 0; I < Size; ++I)
      R[static_cast<size_t>(I)] =
          0.5 *
          std::erfc(-(static_cast<double>(I) / Steps - Span) / std::sqrt(2.0));
    return R;
  }();
  const double X = (Z + Span) * Steps;
  if (!(X > 0))
    return 0;
  if (!(X < Size - 1))
    return 1;
  const size_t I = static_cast<size_t>(X);
  const double F = X - static_cast<double>(I);
  return Table[I] + F * (Table[I + 1] - Table[I]);
}

/// The nodes' gaps and the CDFs of their stall counts, kept for the last
/// inputs a thread saw (a scenario asks for the median and the 99th
/// percentile in turn).
struct SpreadNodes {
  struct Node {
    double Gaps = 0;
    size_t Begin = 0, End = 0; // P(k <= j) at Cum[Begin + j]; none: below
    // The compound count's mean and sd; the normal's skew term (Cornish-
    // Fisher, rho <= 0.5), or the shifted inverse Gaussian's mu, lambda and
    // shift (rho > 0.5), as busyPeriodCountQuantile reads them.
    double Mean = 0, Sd = 0, Skew = 0, Mu = 0, Lambda = 0, Shift = 0;
    bool InverseGaussian = false;
    bool Tail = false; // the exact sums stop short: the law past them
  };
  std::array<Node, SpreadNodeCount> Nodes;
  size_t Count = 0;
  std::vector<double> Cum;
  double Key[6] = {std::nan(""), 0, 0, 0, 0, 0};

  /// P(k <= K) at node \p N, K >= 0 a whole number: the exact sums, and
  /// past them the continuous law's tail scaled to the mass they leave.
  double cdf(const Node &N, double K) const {
    if (N.End == N.Begin)
      return law(N, K);
    const double Last = static_cast<double>(N.End - N.Begin - 1);
    if (K < Last)
      return Cum[N.Begin + static_cast<size_t>(K)];
    const double Head = Cum[N.End - 1];
    if (!N.Tail)
      return Head;
    const double FL = law(N, Last);
    if (!(FL < 1))
      return 1;
    return Head + (1 - Head) * std::max(0.0, law(N, K) - FL) / (1 - FL);
  }

  /// The continuous law's P(k <= K), with the continuity correction.
  double law(const Node &N, double K) const {
    const double X = K + 0.5;
    if (!N.InverseGaussian) {
      // The Cornish-Fisher quantile x = m + sd (z + (z^2 - 1) g), g =
      // skew / 6, solved for z.
      const double D = (X - N.Mean) / N.Sd, G = N.Skew / 6;
      const double Z =
          G > 1e-12
              ? (-1 + std::sqrt(std::max(0.0, 1 + 4 * G * (G + D)))) / (2 * G)
              : D;
      return normalCdfTabled(Z);
    }
    // The shifted inverse Gaussian's.
    const double Y = X - N.Shift;
    if (!(Y > 0))
      return 0;
    return std::min(1.0, inverseGaussianCdf(N.Mu, N.Lambda, Y));
  }
};

const SpreadNodes &spreadNodes(double PerGap, double Rho, double Output,
                               double CV, double Limit, double OwnStart) {
  thread_local SpreadNodes S;
  const double Key[6] = {PerGap, Rho, Output, CV, Limit, OwnStart};
  if (std::equal(std::begin(Key), std::end(Key), std::begin(S.Key)))
    return S;
  std::copy(std::begin(Key), std::end(Key), std::begin(S.Key));
  S.Count = 0;
  S.Cum.clear();
  const double Sigma2 = std::log1p(CV * CV), Sigma = std::sqrt(Sigma2);
  const double Mu = std::log(Output) - Sigma2 / 2;
  // The compound's cumulants a starting stall (busyPeriodCountQuantile).
  const auto [K1, E2, E3] = borelMoments(Rho);
  // One length (no spread): one node.
  const size_t Nodes = Sigma > 0 ? SpreadNodeCount : 1;
  for (size_t I = 0; I < Nodes; ++I) {
    const double Z = Sigma > 0 ? spreadZ()[I] : 0;
    const double N =
        std::min(std::round(std::exp(Mu + Sigma * Z)), std::floor(Limit));
    if (!(N >= 2))
      continue; // one token: no gap, no TPOT
    SpreadNodes::Node &Node = S.Nodes[S.Count++];
    Node.Gaps = N - 1;
    const double M = PerGap * Node.Gaps + OwnStart;
    Node.Begin = Node.End = S.Cum.size();
    Node.Mean = M * K1;
    const double Var = M * E2, Kappa3 = M * E3;
    Node.Sd = std::sqrt(Var);
    // Consul's generalized Poisson summed exactly (the Poisson's
    // recurrence at rho = 0) from a starting mean of at most 15, to 1 -
    // 1e-9 of its mass or 512 terms; near saturation (a count's mean
    // M / (1 - rho)) the continuous laws carry the tail past them, scaled
    // to the mass left, so that the head (no stall, one) stays exact.
    if (M <= 15) {
      double Term = std::exp(-M), Cum = Term;
      S.Cum.push_back(Cum);
      const double LogM = M > 0 ? std::log(M) : 0;
      for (size_t J = 1; M > 0 && Cum < 1 - 1e-9 && J < 512; ++J) {
        Term = Rho > 0 ? std::exp(generalizedPoissonLogPmf(LogM, M, Rho, J))
                       : Term * M / static_cast<double>(J);
        Cum += Term;
        S.Cum.push_back(std::min(Cum, 1.0));
      }
      Node.End = S.Cum.size();
      Node.Tail = Cum < 1 - 1e-6;
      if (!Node.Tail)
        continue;
    }
    Node.Skew = Kappa3 / (Var * Node.Sd);
    Node.InverseGaussian = Rho > 0.5;
    const auto [IgMu, IgLambda, IgShift] =
        shiftedInverseGaussian(Node.Mean, Var, Kappa3);
    Node.Mu = IgMu;
    Node.Lambda = IgLambda;
    Node.Shift = IgShift;
  }
  return S;
}
} // namespace

Time requestTpotQuantileSpread(Time TPOT, Time MeanTPOT, Time Prefill,
                               RequestRate Rate, RequestRate Chain,
                               Tokens Output, Number OutputCV, Tokens Limit,
                               Number Percentile) {
  const double CV = OutputCV.value(), P = Percentile.value();
  const double N = (Output / OneToken).value(),
               Cap = (Limit / OneToken).value();
  const double Rho = (Chain * Prefill / in<Requests>(1.0)).value();
  const double PerGap =
      (Rate * MeanTPOT / in<Requests>(1.0)).value() * (1 - Rho);
  const double T = Prefill.value(), Step = TPOT.value();
  if (std::isnan(CV) || std::isnan(N) || std::isnan(Cap) || std::isnan(Rho) ||
      std::isnan(PerGap) || std::isnan(T) || std::isnan(Step) || std::isnan(P))
    return in<Time>(std::nan(""));
  if (CV < 0)
    return in<Time>(std::nan(""));
  if (!(Rho < 1) || !std::isfinite(PerGap) || !(P < 1))
    return in<Time>(std::numeric_limits<double>::infinity());
  if (!(PerGap > 0) || !(T > 0) || !(N >= 1))
    return TPOT; // no stall
  // The prompts given to the request's engine during its own prefill run
  // before its first decode (prompts first): rho (1 - rho) of them.
  const double OwnStart = Rho * (1 - Rho);
  const SpreadNodes &S = spreadNodes(PerGap, Rho, N, CV, Cap, OwnStart);
  if (S.Count == 0)
    return TPOT; // every output one token: no gap
  const double W = 1.0 / static_cast<double>(S.Count);
  // The stalls a node's gaps hold at Tq (a billionth of one over, so that
  // a step computed as Step + k T / (n - 1) counts its k).
  auto Stalls = [&](double Tq, double Gaps) {
    return std::floor((Tq - Step) * Gaps / T + 1e-9);
  };
  // The mixture's P(TPOT <= Tq), a step function of Tq: each node's count
  // steps at Tq = TPOT + k T / (n - 1).
  auto Below = [&](double Tq) {
    double F = 0;
    for (size_t I = 0; I < S.Count; ++I) {
      const SpreadNodes::Node &Node = S.Nodes[I];
      F += S.cdf(Node, Stalls(Tq, Node.Gaps));
    }
    return F * W;
  };
  if (Below(Step) >= P)
    return TPOT;
  // Bisection to a narrow bracket (doubled from one prefill until it holds
  // p), then the nodes' steps from its low end in turn until one reaches
  // p: the quantile is a step, exactly.
  double Lo = Step, Hi = Step + T;
  for (int I = 0; I < 200 && Below(Hi) < P; ++I)
    Hi = Step + 2 * (Hi - Step);
  if (!(Below(Hi) >= P))
    return in<Time>(std::numeric_limits<double>::infinity());
  for (int I = 0; I < 200 && Hi - Lo > 1e-6 * (Hi - Step); ++I) {
    const double Mid = Lo + (Hi - Lo) / 2;
    (Below(Mid) >= P ? Hi : Lo) = Mid;
  }
  for (int I = 0; I < 1000; ++I) {
    double Next = Hi;
    for (size_t J = 0; J < S.Count; ++J) {
      const double G = S.Nodes[J].Gaps;
      Next = std::min(Next, Step + (Stalls(Lo, G) + 1) * T / G);
    }
    if (!(Next < Hi) || Below(Next) >= P)
      return in<Time>(Next);
    Lo = Next;
  }
  return in<Time>(Hi);
}

Time outputQuantileExtraDecode(Tokens Output, Tokens Mean, Time MeanTPOT) {
  double Extra = ((Output - Mean) / OneToken).value(), T = MeanTPOT.value();
  if (std::isnan(Extra) || std::isnan(T))
    return in<Time>(std::nan(""));
  if (std::isinf(T))
    return MeanTPOT; // the decode, and the latency, are unbounded
  return in<Time>(Extra * T);
}

Time requestStallSpread(Time TPOT, Time MeanTPOT, Time Prefill,
                        RequestRate Rate, RequestRate Chain, Tokens Output,
                        Number Percentile) {
  double Gaps = Output / OneToken - 1.0;
  if (std::isnan(Gaps) || std::isnan(MeanTPOT.value()))
    return in<Time>(std::nan(""));
  if (!(Gaps >= 1))
    return in<Time>(0); // one output token has no gap
  if (std::isinf(MeanTPOT.value()))
    return MeanTPOT; // the prefills fill the replica
  Time AtP = requestTpotQuantile(TPOT, MeanTPOT, Prefill, Rate, Chain, Output,
                                 Percentile);
  return (AtP - MeanTPOT) * Gaps;
}

TokenRate continuousCapacity(Tokens Output, Time PrefillExtra, Time DecodeStep,
                             Number Batch) {
  Tokens Gaps = std::max(Output - OneToken, in<Tokens>(0));
  Time PerRequest = PrefillExtra + Gaps / OneToken * DecodeStep / Batch;
  return Output / PerRequest;
}

Time batchedPrefillShare(Time Compute, Time Memory, Time Step, Tokens Budget,
                         Tokens Prompt) {
  double K = std::max(1.0, std::floor((Budget / Prompt).value()));
  Time Bound = std::max(Compute, Memory);
  return std::max(Compute, Memory / K) + (Step - Bound);
}

TokenRate servedTokenRate(RequestRate Arrival, Tokens Output) {
  return Arrival * Output / in<Requests>(1.0);
}

Number packedChunkPrompts(RequestRate Rate, Time Prefill, Tokens Chunk,
                          Tokens Prompt) {
  double Cap = std::floor((Chunk / Prompt).value());
  double Rho = (Rate * Prefill / in<Requests>(1.0)).value();
  if (std::isnan(Cap) || std::isnan(Rho))
    return in<Number>(std::nan(""));
  double Waiting = Rho < 1 ? 1 / (1 - Rho) : Cap;
  return in<Number>(std::max(1.0, std::min(Cap, Waiting)));
}

Number prefillInterference(RequestRate Rate, Time ExtraPerRequest) {
  return Rate * ExtraPerRequest / in<Requests>(1.0);
}

Time pipelinePrefillStall(Time StageShare, Number Stages, Time DecodeStep) {
  return std::max(Stages * StageShare - DecodeStep, StageShare);
}

namespace {
/// merged_convoy_rate's x, the convoys a prompt: 1 when the convoys never
/// meet (one stage, no rate) and when the first stage alone saturates (rho
/// >= 1: the stall share r T_stall >= 1 then says so), NaN on NaN input.
double solveConvoysPerPrompt(double R, double Share, double Stages) {
  const double Rho = R * Share, A = R * (Stages - 1) * Share;
  if (std::isnan(Rho) || std::isnan(A))
    return std::nan("");
  if (!(R > 0) || !(A > 0))
    return 1;
  if (!(Rho < 1))
    return 1;
  // g(x) = x e^(-a - rho / x) + a x - (1 - rho): increasing and convex on
  // (0, 1], negative at 0+ and >= 0 at 1, so Newton's steps from 1 fall
  // monotonically to the root; a step that would leave (0, 1] halves x.
  double X = 1;
  for (int I = 0; I < 200; ++I) {
    const double E = std::exp(-A - Rho / X);
    const double G = X * E + A * X - (1 - Rho);
    if (!(G > 0))
      break;
    const double Slope = E * (1 + Rho / X) + A;
    double Next = X - G / Slope;
    if (!(Next > 0))
      Next = X / 2;
    if (!(Next < X))
      break;
    const bool Done = X - Next <= 1e-13 * X;
    X = Next;
    if (Done)
      break;
  }
  return X;
}

/// merged_convoy_rate and merged_convoy_stall ask in turn with the same
/// inputs: the last answer a thread found is kept.
double convoysPerPrompt(double R, double Share, double Stages) {
  thread_local double LastR = std::nan(""), LastShare, LastStages, LastX;
  if (R == LastR && Share == LastShare && Stages == LastStages)
    return LastX;
  LastX = solveConvoysPerPrompt(R, Share, Stages);
  LastR = R;
  LastShare = Share;
  LastStages = Stages;
  return LastX;
}

/// merged_convoy_stall's f, the share of the time the chained convoys
/// stall a running sequence: C - r x (L - T_stall), C = rho + a x, L = m
/// T_share; r T_stall when they never meet (x = 1).
double mergedConvoyShare(double R, double Share, double M, double Stall,
                         double X) {
  if (X == 1)
    return R * Stall;
  const double Covered = R * Share + R * (M - 1) * Share * X;
  const double Free = std::max(M * Share - Stall, 0.0); // spent anyway
  return Covered - R * X * Free;
}
} // namespace

RequestRate mergedConvoyRate(RequestRate Rate, Time StageShare, Number Stages) {
  const double R = (Rate / in<Requests>(1.0)).value();
  const double X = convoysPerPrompt(R, StageShare.value(), Stages.value());
  return Rate * X;
}

Time mergedConvoyStall(RequestRate Rate, Time Convoy, Time StageShare,
                       Number Stages) {
  const double R = (Rate / in<Requests>(1.0)).value();
  const double Share = StageShare.value(), M = Stages.value();
  const double X = convoysPerPrompt(R, Share, M);
  if (std::isnan(X) || std::isnan(Convoy.value()))
    return in<Time>(std::nan(""));
  if (X == 1)
    return Convoy; // one stage, or an isolated prompt: its whole convoy
  return in<Time>(mergedConvoyShare(R, Share, M, Convoy.value(), X) / (R * X));
}

namespace {
/// A replica with its slots full: a request's share of the decode steps,
/// (n - 1) T_step / B, and its n, or NaN for either on a NaN input.
std::pair<double, double> slotsFullShare(Tokens Output, Time DecodeStep,
                                         Number Batch) {
  const double N = (Output / OneToken).value(), Step = DecodeStep.value(),
               B = Batch.value();
  if (std::isnan(N) || std::isnan(Step) || std::isnan(B) || !(N > 0) ||
      !(B > 0))
    return {std::nan(""), std::nan("")};
  return {std::max(N - 1, 0.0) * Step / B, N};
}

/// The request rate at which the decodes and the prefills' stalls fill a
/// full replica's time: the root of Excess (increasing, -1 at 0, >= 0 at
/// Hi) by Algorithm 748 (Boost.Math), to 50 bits.
template <class Fn> double fillingRate(Fn Excess, double Hi) {
  std::uintmax_t Iterations = 200;
  auto [Lo, Up] = boost::math::tools::toms748_solve(
      Excess, 0.0, Hi, -1.0, Excess(Hi),
      boost::math::tools::eps_tolerance<double>(50), Iterations);
  return Lo + (Up - Lo) / 2;
}
} // namespace

TokenRate pipelinedCapacity(Tokens Output, Time StageShare, Time Convoy,
                            Time DecodeStep, Number Batch, Number Stages) {
  const double M = Stages.value(), Share = StageShare.value();
  if (!(M > 1) || !(Share > 0))
    return continuousCapacity(Output, StageShare, DecodeStep, Batch);
  const auto [Decode, N] = slotsFullShare(Output, DecodeStep, Batch);
  const double Stall = Convoy.value();
  if (std::isnan(Decode) || std::isnan(Stall))
    return in<TokenRate>(std::nan(""));
  // The share of the time the convoys stall the running sequences at r
  // (merged_convoy_stall's f), and the decodes' share beside it.
  auto Excess = [&, Decode = Decode](double R) {
    return R * Decode +
           mergedConvoyShare(R, Share, M, Stall,
                             convoysPerPrompt(R, Share, M)) -
           1;
  };
  double Hi = 1 / Share;
  if (Decode > 0)
    Hi = std::min(Hi, 1 / Decode);
  if (!(Excess(Hi) >= 0))
    return in<TokenRate>(std::nan(""));
  return in<TokenRate>(N * fillingRate(Excess, Hi));
}

namespace {
/// The share of the time at least one of m engines passes a prompt's
/// chunks, each engine an M/G/1 queue of passages L at r / m: 1 - (1 -
/// rho_e)^m, rho_e = r L / m (1 at rho_e >= 1; r L as they never meet).
double chunkSpellShare(double RL, double M) {
  const double Each = RL / M;
  return Each < 1 ? -std::expm1(M * std::log1p(-Each)) : 1;
}
} // namespace

Time chunkConvoyStall(RequestRate Rate, Time Extra, Time Passage,
                      Number Stages) {
  const double M = Stages.value();
  if (!(M > 1))
    return Extra;
  const double RL = (Rate * Passage / in<Requests>(1.0)).value();
  if (std::isnan(RL) || std::isnan(Extra.value()))
    return in<Time>(std::nan(""));
  if (!(RL > 0) || !(Passage.value() > 0))
    return Extra; // alone: its extra time whole
  return Extra * (chunkSpellShare(RL, M) / RL);
}

TokenRate pipelinedChunkedCapacity(Tokens Output, Time Extra, Time Passage,
                                   Time DecodeStep, Number Batch,
                                   Number Stages) {
  const double M = Stages.value(), L = Passage.value();
  if (!(M > 1) || !(L > 0))
    return continuousCapacity(Output, Extra, DecodeStep, Batch);
  const auto [Decode, N] = slotsFullShare(Output, DecodeStep, Batch);
  const double E = Extra.value();
  if (std::isnan(Decode) || std::isnan(E))
    return in<TokenRate>(std::nan(""));
  const double Most = M / L; // every engine passing a prompt's chunks
  auto Excess = [&, Decode = Decode](double R) {
    return R * Decode + chunkSpellShare(R * L, M) * E / L - 1;
  };
  if (!(Decode > 0) || !(Excess(Most) > 0))
    return in<TokenRate>(N * Most);
  return in<TokenRate>(N * fillingRate(Excess, Most));
}

Time interferedTokenTime(Time TPOT, Number Interference) {
  if (!(Interference.value() < 1))
    return in<Time>(std::numeric_limits<double>::infinity());
  return TPOT / (1.0 - Interference);
}

Number prefillStallProbability(Time TPOT, RequestRate Rate) {
  return in<Number>(-std::expm1(-(Rate * TPOT / in<Requests>(1.0)).value()));
}

Tokens prefillTokensComputed(Tokens Prompt, Number HitRate) {
  return Prompt * (1.0 - HitRate);
}

Time kvTransferTime(Tokens Prompt, BytesPerToken KV, Bandwidth Fabric,
                    Time Latency) {
  return Prompt * KV / Fabric + Latency;
}

Time timeToFirstToken(Time QueueWait, Time Prefill, Time KVTransfer) {
  return QueueWait + Prefill + KVTransfer;
}

Time endToEndLatency(Time TTFT, Time TPOT, Tokens Output) {
  // The first token comes with the prefill; each later one costs a TPOT.
  Number LaterTokens = Output / OneToken - 1.0;
  LaterTokens = std::max(LaterTokens, in<Number>(0.0));
  return TTFT + LaterTokens * TPOT;
}

TokenRate replicaThroughput(Number Concurrency, Tokens Output, Time Latency) {
  return Concurrency * Output / Latency;
}

TokenRate throughputPerDevice(TokenRate Replica, Number DevicesPerReplica) {
  return Replica / DevicesPerReplica;
}

Number moeActiveParams(Number DenseParams, Number ExpertParams, Number TopK,
                       Number Experts) {
  return DenseParams + TopK / Experts * ExpertParams;
}

} // namespace mlsc::walls
