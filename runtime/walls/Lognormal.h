//===- Lognormal.h - A first token's time through two percentiles --------===//
//
// The closed forms read a first token's time under a prompt spread as a
// shifted lognormal with the prompt's sigma through its lowered median
// and 99th percentile: ttft_sum_quantile (TailLatency.cpp) sums it with
// the waits, chunked_first_token_quantile (Serving.cpp) with the prompts
// that ride in its iteration. Both take it from here.
//
//===----------------------------------------------------------------------===//

#ifndef MLSC_RUNTIME_WALLS_LOGNORMAL_H
#define MLSC_RUNTIME_WALLS_LOGNORMAL_H

#include <cmath>

namespace mlsc::walls {

/// The standard normal's p-quantile (the four percentiles every scenario
/// asks for computed once; TailLatency.cpp).
double normalQuantile(double P);

/// Y = Offset + Scale e^(Sigma Z), Z standard normal: sigma^2 = ln(1 +
/// cv^2), through Y's median A50 (Z = 0) and 99th percentile A99.
struct ShiftedLognormal {
  double Offset = 0, Scale = 0, Sigma = 0;

  static ShiftedLognormal through(double A50, double A99, double Cv) {
    ShiftedLognormal L;
    L.Sigma = std::sqrt(std::log1p(Cv * Cv));
    L.Scale = (A99 - A50) / std::expm1(L.Sigma * normalQuantile(0.99));
    L.Offset = A50 - L.Scale;
    return L;
  }
  /// Y's p-quantile.
  double quantile(double P) const {
    return Offset + Scale * std::exp(Sigma * normalQuantile(P));
  }
};

} // namespace mlsc::walls

#endif
