//===- TailLatencyTest.cpp - Known answers for wall 7 (tail latency) ------===//
//
// Each expected value is a hand calculation written out in the test or an
// independent computation of Erlang C: the textbook sum over a^k / k! in
// plain doubles, or the same sum in long double normalised by its largest
// term, which overflows at no c.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

const double Inf = std::numeric_limits<double>::infinity();

/// C(c, a) = (a^c/c! * c/(c-a)) / (sum_{k<c} a^k/k! + a^c/c! * c/(c-a)).
double directErlangC(int Servers, double Load) {
  double Term = 1, Sum = 0;
  for (int K = 0; K < Servers; ++K) {
    Sum += Term;
    Term *= Load / (K + 1);
  }
  double Queued = Term * Servers / (Servers - Load);
  return Queued / (Sum + Queued);
}

/// The same sum in long double with every a^k/k! divided by the largest one,
/// a^m/m! at m = floor(a), and walked outward from it.
long double scaledErlangC(int Servers, long double Load) {
  int Peak = static_cast<int>(std::floor(Load));
  long double Sum = 0, Term = 1, AtServers = 0;
  for (int K = Peak; K >= 0; --K) {
    if (K < Servers)
      Sum += Term;
    Term *= K / Load;
  }
  Term = 1;
  for (int K = Peak; K < Servers; ++K) {
    Term *= Load / (K + 1);
    if (K + 1 < Servers)
      Sum += Term;
  }
  AtServers = Term;
  long double Queued = AtServers * Servers / (Servers - Load);
  return Queued / (Sum + Queued);
}

Number servers(double C) { return in<Number>(C); }
RequestRate perSecond(double R) { return in<RequestRate>(R); }
Time seconds(double S) { return in<Time>(S); }

const Number One = in<Number>(1);

TEST(TailLatency, SingleServerIsMM1) {
  // M/M/1: P(wait) = rho, W_q = rho / (mu - lambda).
  // lambda = 0.8 req/s, S = 1 s: rho = 0.8, W_q = 0.8 / 0.2 = 4 s.
  EXPECT_NEAR(erlangC(One, in<Number>(0.8)).value(), 0.8, 1e-15);
  EXPECT_NEAR(meanQueueWait(perSecond(0.8), seconds(1), One).value(), 4.0,
              1e-13);
  // lambda = 30 req/s, S = 20 ms: rho = 0.6, W_q = 0.6 / (50 - 30) = 30 ms.
  EXPECT_DOUBLE_EQ(offeredLoad(perSecond(30), seconds(0.02)).value(), 0.6);
  EXPECT_DOUBLE_EQ(utilisation(perSecond(30), seconds(0.02), One).value(), 0.6);
  EXPECT_NEAR(meanQueueWait(perSecond(30), seconds(0.02), One).value(), 0.03,
              1e-15);
}

TEST(TailLatency, ErlangCTextbookValues) {
  // a = 1 Erlang. With P0 = 1 / (sum_{k<c} 1/k! + 1/c! * c/(c-1)):
  // c = 2: P0 = 1 / (1 + 1 + 1) = 1/3, C = 1/2! * 2/1 * P0 = 1/3.
  // c = 3: C = (1/6 * 3/2) / (1 + 1 + 1/2 + 1/4) = 1/11.
  // c = 4: C = (1/24 * 4/3) / (8/3 + 1/18) = 1/49.
  // c = 5: C = (1/120 * 5/4) / (65/24 + 1/96) = 1/261.
  EXPECT_NEAR(erlangC(servers(2), One).value(), 1.0 / 3, 1e-15);
  EXPECT_NEAR(erlangC(servers(3), One).value(), 1.0 / 11, 1e-15);
  EXPECT_NEAR(erlangC(servers(4), One).value(), 1.0 / 49, 1e-15);
  EXPECT_NEAR(erlangC(servers(5), One).value(), 1.0 / 261, 1e-16);
  // W_q = C / (c*mu - lambda) = (1/3) / (2 - 1) s at S = 1 s.
  EXPECT_NEAR(meanQueueWait(perSecond(1), seconds(1), servers(2)).value(),
              1.0 / 3, 1e-15);
  // Part of a server serves nobody: 2.5 servers are 2; 3 - 1e-12 is 3.
  EXPECT_EQ(erlangC(servers(2.5), One).value(),
            erlangC(servers(2), One).value());
  EXPECT_EQ(erlangC(servers(3 - 1e-12), One).value(),
            erlangC(servers(3), One).value());
}

TEST(TailLatency, MatchesDirectSummationUpTo50Servers) {
  for (int C = 1; C <= 50; ++C)
    for (double Rho : {0.05, 0.3, 0.7, 0.9, 0.99}) {
      double A = Rho * C;
      double Expected = directErlangC(C, A);
      double Got = erlangC(servers(C), in<Number>(A)).value();
      EXPECT_NEAR(Got / Expected, 1.0, 1e-12) << "c = " << C << ", a = " << A;
    }
}

TEST(TailLatency, ThousandsOfServersStayFiniteAndExact) {
  // a^c/c! alone overflows a double from c = 171 on; the log-space
  // recursion must agree with the scaled long-double sum. c = 5000 also
  // exercises the recursion's warm start (a > 1600).
  for (int C : {1000, 5000}) {
    for (double Rho : {0.95, 0.999}) {
      double A = Rho * C;
      double Got = erlangC(servers(C), in<Number>(A)).value();
      ASSERT_TRUE(std::isfinite(Got));
      EXPECT_GE(Got, 0.0);
      EXPECT_LE(Got, 1.0);
      long double Expected = scaledErlangC(C, A);
      EXPECT_NEAR(Got / static_cast<double>(Expected), 1.0, 1e-12)
          << "c = " << C << ", a = " << A;
    }
  }
  // The scaled reference itself, checked where the plain sum still works.
  EXPECT_NEAR(static_cast<double>(scaledErlangC(40, 36)) /
                  directErlangC(40, 36),
              1.0, 1e-13);
  // Far more servers than load: P(wait) is below the smallest double.
  EXPECT_EQ(erlangC(servers(1e12), in<Number>(10)).value(), 0.0);
}

TEST(TailLatency, UnstableQueueHasInfiniteWaits) {
  // rho = 1.2 on 2 servers (a = 2.4) and rho = 1 exactly on 3 (a = 3).
  for (auto [C, Lambda] : {std::pair{2.0, 2.4}, std::pair{3.0, 3.0}}) {
    Time S = seconds(1);
    EXPECT_EQ(queueIsStable(perSecond(Lambda), S, servers(C)).value(), 0.0);
    EXPECT_DOUBLE_EQ(utilisation(perSecond(Lambda), S, servers(C)).value(),
                     Lambda / C);
    EXPECT_EQ(erlangC(servers(C), in<Number>(Lambda)).value(), 1.0);
    EXPECT_EQ(meanQueueWait(perSecond(Lambda), S, servers(C)).value(), Inf);
    EXPECT_EQ(
        waitExceedance(perSecond(Lambda), S, servers(C), seconds(100)).value(),
        1.0);
    EXPECT_EQ(
        waitQuantile(perSecond(Lambda), S, servers(C), in<Number>(0.5)).value(),
        Inf);
    EXPECT_EQ(
        latencyQuantile(perSecond(Lambda), S, servers(C), One, in<Number>(0.99))
            .value(),
        Inf);
    EXPECT_EQ(ttftQuantile(perSecond(Lambda), S, servers(C), One, seconds(0.1),
                           in<Number>(0.5))
                  .value(),
              Inf);
    EXPECT_EQ(
        allenCunneenWait(perSecond(Lambda), S, servers(C), One, in<Number>(0))
            .value(),
        Inf);
  }
  EXPECT_EQ(kingmanWait(perSecond(1), seconds(1), One, One).value(), Inf);
  // No whole server at all.
  EXPECT_EQ(utilisation(perSecond(1), seconds(1), servers(0.5)).value(), Inf);
  // Just below saturation the queue is stable and its wait finite:
  // c = 1, rho = 0.999: W_q = 0.999 / 0.001 s = 999 s.
  EXPECT_EQ(queueIsStable(perSecond(0.999), seconds(1), One).value(), 1.0);
  EXPECT_NEAR(meanQueueWait(perSecond(0.999), seconds(1), One).value(), 999,
              1e-9);
}

TEST(TailLatency, WaitQuantileClosedForm) {
  // c = 2, a = 1, S = 1 s: C = 1/3, c*mu - lambda = 1/s, so
  // P(W_q > t) = exp(-t) / 3 and t_p = ln((1/3) / (1 - p)).
  RequestRate L = perSecond(1);
  Time S = seconds(1);
  Number C = servers(2);
  EXPECT_NEAR(waitExceedance(L, S, C, seconds(0)).value(), 1.0 / 3, 1e-15);
  EXPECT_NEAR(waitExceedance(L, S, C, seconds(2)).value(), std::exp(-2.0) / 3,
              1e-15);
  // p = 0.5: P(wait) = 1/3 <= 1 - p, so the median wait is 0.
  EXPECT_EQ(waitQuantile(L, S, C, in<Number>(0.5)).value(), 0.0);
  // p = 0.9: ln(10/3) = 1.2040 s; p = 0.99: ln(100/3) = 3.5066 s.
  EXPECT_NEAR(waitQuantile(L, S, C, in<Number>(0.9)).value(),
              std::log(10.0 / 3), 1e-14);
  Time T99 = waitQuantile(L, S, C, in<Number>(0.99));
  EXPECT_NEAR(T99.value(), std::log(100.0 / 3), 1e-14);
  EXPECT_NEAR(T99.value(), 3.5066, 5e-5);
  // The quantile inverts the tail.
  EXPECT_NEAR(waitExceedance(L, S, C, T99).value(), 0.01, 1e-15);
  // Time scales with S: S = 50 ms, lambda = 20 req/s is the same queue.
  EXPECT_NEAR(
      waitQuantile(perSecond(20), seconds(0.05), C, in<Number>(0.99)).value(),
      0.05 * std::log(100.0 / 3), 1e-15);
}

TEST(TailLatency, KingmanAndAllenCunneenWithUnitCVsAreMarkovian) {
  // ca = cs = 1: Kingman is exact for M/M/1, W_q = rho S / (1 - rho);
  // rho = 0.75, S = 2 s: 0.75 * 2 / 0.25 = 6 s.
  RequestRate L = perSecond(0.375);
  Time S = seconds(2);
  EXPECT_NEAR(kingmanWait(L, S, One, One).value(), 6.0, 1e-13);
  EXPECT_NEAR(meanQueueWait(L, S, One).value(), 6.0, 1e-13);
  // cs = 0 (M/D/1) halves it: Pollaczek-Khinchine, rho S / (2 (1 - rho)).
  EXPECT_NEAR(kingmanWait(L, S, One, in<Number>(0)).value(), 3.0, 1e-13);
  // On one server Allen-Cunneen is Kingman.
  EXPECT_NEAR(allenCunneenWait(L, S, One, One, in<Number>(0.5)).value(),
              kingmanWait(L, S, One, in<Number>(0.5)).value(), 1e-13);
  // c = 2, a = 1, S = 1 s: W_q(M/M/2) = 1/3 s; cs = 1 leaves it, cs = 2
  // multiplies it by (1 + 4) / 2, cs = 0 by 1/2.
  RequestRate L2 = perSecond(1);
  Time S2 = seconds(1);
  EXPECT_NEAR(allenCunneenWait(L2, S2, servers(2), One, One).value(), 1.0 / 3,
              1e-15);
  EXPECT_NEAR(allenCunneenWait(L2, S2, servers(2), One, in<Number>(2)).value(),
              2.5 / 3, 1e-15);
  EXPECT_NEAR(allenCunneenWait(L2, S2, servers(2), One, in<Number>(0)).value(),
              0.5 / 3, 1e-15);
}

TEST(TailLatency, LatencyAndTTFTPercentilesByHand) {
  // lambda = 10 req/s, S = 100 ms, c = 2: a = 1, C = 1/3,
  // c*mu - lambda = 10/s. t_p = 0.1 s * ln((1/3) / (1 - p)) when positive.
  RequestRate L = perSecond(10);
  Time S = seconds(0.1), Prefill = seconds(0.02);
  Number C = servers(2);
  EXPECT_NEAR(latencyQuantile(L, S, C, One, in<Number>(0.5)).value(), 0.1,
              1e-15);
  EXPECT_NEAR(latencyQuantile(L, S, C, One, in<Number>(0.9)).value(),
              0.1 * std::log(10.0 / 3) + 0.1, 1e-14);
  EXPECT_NEAR(latencyQuantile(L, S, C, One, in<Number>(0.99)).value(),
              0.1 * std::log(100.0 / 3) + 0.1, 1e-14);
  EXPECT_NEAR(latencyQuantile(L, S, C, One, in<Number>(0.999)).value(),
              0.1 * std::log(1000.0 / 3) + 0.1, 1e-14);
  EXPECT_NEAR(latencyQuantile(L, S, C, One, in<Number>(0.95)).value(),
              0.1 * std::log(20.0 / 3) + 0.1, 1e-14);
  EXPECT_NEAR(ttftQuantile(L, S, C, One, Prefill, in<Number>(0.5)).value(),
              0.02, 1e-15);
  EXPECT_NEAR(ttftQuantile(L, S, C, One, Prefill, in<Number>(0.9)).value(),
              0.1 * std::log(10.0 / 3) + 0.02, 1e-14);
  EXPECT_NEAR(ttftQuantile(L, S, C, One, Prefill, in<Number>(0.99)).value(),
              0.1 * std::log(100.0 / 3) + 0.02, 1e-14);
  EXPECT_NEAR(ttftQuantile(L, S, C, One, Prefill, in<Number>(0.999)).value(),
              0.1 * std::log(1000.0 / 3) + 0.02, 1e-14);
  // cs = 0 halves the wait: Allen-Cunneen factor (1 + 0) / 2.
  EXPECT_NEAR(latencyQuantile(L, S, C, in<Number>(0), in<Number>(0.99)).value(),
              0.05 * std::log(100.0 / 3) + 0.1, 1e-14);
  // No load: no wait, latency is the service time.
  EXPECT_EQ(latencyQuantile(perSecond(0), S, C, One, in<Number>(0.999)).value(),
            0.1);
}

TEST(TailLatency, ServersForP99ByHand) {
  // lambda = 1 req/s, S = 1 s (a = 1), cs = 1. P99 latency = 1 s + t_0.99:
  //   c = 2: C = 1/3,   1 + ln(100/3)      = 4.5066 s
  //   c = 3: C = 1/11,  1 + ln(100/11) / 2 = 2.1036 s
  //   c = 4: C = 1/49,  1 + ln(100/49) / 3 = 1.2378 s
  //   c = 5: C = 1/261 < 0.01,               1 s
  RequestRate L = perSecond(1);
  Time S = seconds(1);
  auto Needed = [&](double Target) {
    return serversForP99Latency(L, S, One, seconds(Target), in<Number>(0),
                                servers(1))
        .value();
  };
  EXPECT_EQ(Needed(5.0), 2.0);
  EXPECT_EQ(Needed(4.51), 2.0);
  EXPECT_EQ(Needed(4.5), 3.0);
  EXPECT_EQ(Needed(2.11), 3.0);
  EXPECT_EQ(Needed(2.1), 4.0);
  EXPECT_EQ(Needed(1.24), 4.0);
  EXPECT_EQ(Needed(1.23), 5.0);
  EXPECT_EQ(Needed(1.0), 5.0);
  // Below the service time no number of servers helps.
  EXPECT_EQ(Needed(0.99), Inf);
  // The hand values themselves, through latencyQuantile at p = 0.99.
  EXPECT_NEAR(latencyQuantile(L, S, servers(3), One, in<Number>(0.99)).value(),
              1 + std::log(100.0 / 11) / 2, 1e-14);
  EXPECT_NEAR(latencyQuantile(L, S, servers(4), One, in<Number>(0.99)).value(),
              1 + std::log(100.0 / 49) / 3, 1e-14);
  EXPECT_EQ(latencyQuantile(L, S, servers(5), One, in<Number>(0.99)).value(),
            1.0);
}

TEST(TailLatency, ServersForP99AreMinimalAndMonotoneInTarget) {
  // 95 req/s of 10 s requests (a = 950), cs = 1.5; targets from 10 s up.
  RequestRate L = perSecond(95);
  Time S = seconds(10);
  Number CS = in<Number>(1.5);
  double Previous = Inf;
  for (double Target = 10; Target < 100; Target *= 1.05) {
    double C = serversForP99Latency(L, S, CS, seconds(Target), in<Number>(0),
                                    servers(1))
                   .value();
    ASSERT_TRUE(std::isfinite(C)) << Target;
    EXPECT_LE(C, Previous) << Target;
    EXPECT_GT(C, 950.0);
    EXPECT_LE(latencyQuantile(L, S, servers(C), CS, in<Number>(0.99)).value(),
              Target);
    if (C > 951) {
      EXPECT_GT(
          latencyQuantile(L, S, servers(C - 1), CS, in<Number>(0.99)).value(),
          Target);
    }
    Previous = C;
  }
  EXPECT_LT(Previous, 1000.0);
}

TEST(TailLatency, PeakedSlotsWithoutStallsAreErlangC) {
  // No prefill stalls the running requests: ln C and the wait's CV are the
  // M/G/c queue's, bit for bit.
  for (double C : {1.0, 4.0, 32.0, 1000.0}) {
    for (double Rho : {0.1, 0.5, 0.9}) {
      RequestRate L = perSecond(Rho * C);
      Time S = seconds(1);
      EXPECT_EQ(logPeakedErlangCOf(L, S, servers(C), in<Number>(0)).value(),
                logErlangCOf(L, S, servers(C)).value());
      EXPECT_EQ(
          fullSlotsWaitCV(L, S, servers(C), in<Number>(0.7), in<Number>(0))
              .value(),
          0.7);
    }
  }
}

TEST(TailLatency, PeakedSlotsByHand) {
  // The quickstart's case: 32 slots, 4 req/s of a 4.935 s service (a =
  // 19.74 Erlangs), prefills stalling a running request rho_s = 0.3249 of
  // its time. z = 1 / 0.6751^2 = 2.194137; Hayward: a / z = 8.996703
  // Erlangs on c / z = 14.58432 servers; the textbook sum gives C(14,
  // 8.996703) = 0.0889593 and C(15, 8.996703) = 0.0481026, and ln C
  // interpolated 0.58432 of the way from ln 0.0889593 to ln 0.0481026 is
  // -2.778842 (C = 0.06211; plain Erlang C: ln C = -4.894564, C = 0.0075).
  // The simulator's 50,000 requests of the quickstart found 6.66% of them
  // arriving at full slots (docs/walls.md, wall 7).
  RequestRate L = perSecond(4);
  Time S = seconds(4.935);
  Number Rho = in<Number>(0.3249);
  double Z = 1 / (0.6751 * 0.6751);
  double X = 32 / Z, A = 19.74 / Z;
  EXPECT_NEAR(directErlangC(14, A), 0.0889593, 1e-7);
  EXPECT_NEAR(directErlangC(15, A), 0.0481026, 1e-7);
  double Hand = std::log(directErlangC(14, A)) +
                (X - 14) * (std::log(directErlangC(15, A)) -
                            std::log(directErlangC(14, A)));
  EXPECT_NEAR(Hand, -2.778842, 1e-6);
  EXPECT_NEAR(logPeakedErlangCOf(L, S, servers(32), Rho).value(), Hand, 1e-12);
  EXPECT_NEAR(logErlangCOf(L, S, servers(32)).value(), -4.894564, 1e-6);
  // A wait for a full slot: G = 1 + 0.3249 + 32 x 0.3249^2 / (19.74 x
  // 0.6751) = 1.578374 times S / (c - a) (E[Q + 1] = 32 / (0.6751 x
  // 12.26) = 3.866 completions, 2.866 admissions' prefills among them);
  // with cs = 1 (F = 1) the wait's CV is sqrt(2 G - 1) = 1.468587; with cs
  // = 0.5 (F = 0.625), sqrt(1.25 G - 1) = 0.986391. The simulator's mean
  // wait at full slots: 0.565 s with outputs of cv 1, against 1.578374 x
  // 4.935 / 12.26 = 0.6353 s here and 0.4025 s as M/M/c.
  EXPECT_NEAR(fullSlotsWaitCV(L, S, servers(32), One, Rho).value(), 1.468587,
              1e-6);
  EXPECT_NEAR(fullSlotsWaitCV(L, S, servers(32), in<Number>(0.5), Rho).value(),
              0.986391, 1e-6);
  // Prefills that take all of a replica's time leave no steady state.
  EXPECT_EQ(logPeakedErlangCOf(L, S, servers(32), One).value(), 0.0);
  EXPECT_EQ(fullSlotsWaitCV(L, S, servers(32), One, One).value(), Inf);
  EXPECT_TRUE(std::isnan(
      logPeakedErlangCOf(L, S, servers(32), in<Number>(std::nan(""))).value()));
}

TEST(TailLatency, PeakedSlotsRiseWithTheStallsAndFallWithTheSlots) {
  RequestRate L = perSecond(4);
  Time S = seconds(4.935);
  double Previous = -Inf;
  for (double Rho = 0; Rho < 0.95; Rho += 0.05) {
    double LogC =
        logPeakedErlangCOf(L, S, servers(32), in<Number>(Rho)).value();
    EXPECT_GE(LogC, Previous) << Rho;
    EXPECT_LE(LogC, 0.0) << Rho;
    Previous = LogC;
  }
  Previous = 0;
  for (double C = 20; C < 200; C += 1) {
    double LogC = logPeakedErlangCOf(L, S, servers(C), in<Number>(0.3)).value();
    EXPECT_LE(LogC, Previous + 1e-12) << C;
    Previous = LogC;
  }
}

TEST(TailLatency, ServersForP99WithStallsMeetTheTargetAtTheirOwnStalls) {
  // The quickstart's slots: rho_s = 0.3249 at 32 slots. At c slots of the
  // same layout rho_c = 0.3249 x 32 / c, and the service keeps its
  // stall-free part, S_c = 4.935 x 0.6751 / (1 - rho_c). The count found
  // meets the target in both forms there, and one fewer does not.
  RequestRate L = perSecond(4);
  Time S = seconds(4.935);
  Number Rho0 = in<Number>(0.3249);
  double K = 0.3249 * 32;
  auto P99 = [&](double C) {
    double R = K / C;
    Time Sc = seconds(4.935 * 0.6751 / (1 - R));
    Number Rho = in<Number>(R);
    Number LogC = logPeakedErlangCOf(L, Sc, servers(C), Rho);
    Number CV = fullSlotsWaitCV(L, Sc, servers(C), One, Rho);
    return latencyQuantileGiven(LogC, L, Sc, servers(C), CV, in<Number>(0.99))
        .value();
  };
  // At the declared 32 slots the search's P99 is the scorecard's form.
  EXPECT_NEAR(P99(32),
              latencyQuantileGiven(
                  logPeakedErlangCOf(L, S, servers(32), Rho0), L, S,
                  servers(32), fullSlotsWaitCV(L, S, servers(32), One, Rho0),
                  in<Number>(0.99))
                  .value(),
              1e-9);
  for (double Target : {4.0, 5.0, 5.5, 6.0, 7.0, 9.0, 20.0}) {
    double C =
        serversForP99Latency(L, S, One, seconds(Target), Rho0, servers(32))
            .value();
    ASSERT_TRUE(std::isfinite(C)) << Target;
    EXPECT_LE(P99(C), Target) << Target;
    EXPECT_GT(P99(C - 1), Target) << Target;
  }
  // Below the stall-free service, 4.935 x 0.6751 = 3.332 s, no count
  // helps.
  EXPECT_EQ(
      serversForP99Latency(L, S, One, seconds(3.3), Rho0, servers(32)).value(),
      Inf);
  // Fewer slots than prompts can keep up with are never the answer: at 12
  // slots rho_c = 0.866 and the service 16.8 s.
  double C =
      serversForP99Latency(L, S, One, seconds(60), Rho0, servers(32)).value();
  EXPECT_GT(C, K);
  EXPECT_LE(P99(C), 60.0);
}

TEST(TailLatency, FormulasCarryWallAndDimensions) {
  EXPECT_EQ(formula(FormulaId::ErlangC).W, Wall::TailLatency);
  EXPECT_EQ(formula(FormulaId::ServersForP99Latency).W, Wall::TailLatency);
  EXPECT_EQ(formula(FormulaId::OfferedLoad).Params[0].str(), "req/s");
  EXPECT_TRUE(formula(FormulaId::OfferedLoad).Result.isDimensionless());
  EXPECT_EQ(formula(FormulaId::LatencyQuantileGiven).Result.str(), "s");
  ASSERT_EQ(formula(FormulaId::TtftQuantileGiven).Params.size(), 7u);
  EXPECT_EQ(formula(FormulaId::TtftQuantileGiven).Params[5].str(), "s");
  // Through the evaluator's double adapter: C(2, 1) = 1/3.
  double In[] = {2, 1};
  EXPECT_NEAR(formula(FormulaId::ErlangC).Eval(In), 1.0 / 3, 1e-15);
}

} // namespace

namespace {

// The graph computes ln C once and passes it to every percentile; that must
// give the library's answers bit for bit, at a few servers and at many.
TEST(TailLatency, SharedErlangCGivesTheSamePercentilesBitForBit) {
  const std::pair<double, double> Cases[] = {
      {8, 1.2}, {32, 2.3}, {400, 0.5}, {3000, 0.2}};
  for (auto [Servers, Service] : Cases) {
    RequestRate L = in<RequestRate>(Servers * 0.8 / Service);
    Time S = in<Time>(Service), First = in<Time>(0.05);
    Number C = in<Number>(Servers), CV = in<Number>(1.5);
    Number LogC = logErlangCOf(L, S, C);
    for (double P : {0.5, 0.9, 0.99, 0.999}) {
      Number Pq = in<Number>(P);
      EXPECT_EQ(latencyQuantileGiven(LogC, L, S, C, CV, Pq).value(),
                latencyQuantile(L, S, C, CV, Pq).value())
          << Servers << " " << P;
      EXPECT_EQ(ttftQuantileGiven(LogC, L, S, C, CV, First, Pq).value(),
                ttftQuantile(L, S, C, CV, First, Pq).value())
          << Servers << " " << P;
    }
  }
}

} // namespace

namespace {

TEST(TailLatency, ArrivalsWaitForTheIterationInFlight) {
  // 10 ms iterations; prefills take 20% of the replica's time and it holds
  // 2 other requests on average: an arrival lands in a decode iteration
  // with q = 0.8 x (1 - e^-2) = 0.69173 and then waits U[0, 10 ms]. The
  // median: 10 x (0.5 - 0.30827) / 0.69173 = 2.7718 ms; the p99: 10 x
  // (0.99 - 0.30827) / 0.69173 = 9.8554 ms; below 1 - q = 0.308, none.
  using namespace mlsc::q;
  using namespace mlsc::walls;
  auto at = [](double T, double Rho, double N, double P) {
    return iterationResidualQuantile(in<Time>(T), in<Number>(Rho),
                                     in<Number>(N), in<Number>(P))
        .value();
  };
  EXPECT_NEAR(at(0.010, 0.2, 2, 0.5), 2.7717647e-3, 1e-9);
  EXPECT_NEAR(at(0.010, 0.2, 2, 0.99), 9.8554353e-3, 1e-9);
  EXPECT_EQ(at(0.010, 0.2, 2, 0.2), 0.0);
  // A replica with no other request, or prefilling all the time: no wait.
  EXPECT_EQ(at(0.010, 0.2, 0, 0.99), 0.0);
  EXPECT_EQ(at(0.010, 1.0, 5, 0.99), 0.0);
  // Many others, no prefills: nearly always a decode iteration, p x T.
  EXPECT_NEAR(at(0.010, 0.0, 50, 0.5), 5e-3, 1e-12);
  EXPECT_TRUE(std::isnan(at(std::nan(""), 0.2, 2, 0.5)));
  EXPECT_TRUE(std::isinf(at(INFINITY, 0.2, 2, 0.5)));
  // Each thread keeps q for the last (rho, n) it saw: after other inputs
  // the first ones give the same answer again.
  EXPECT_NEAR(at(0.010, 0.2, 2, 0.99), 9.8554353e-3, 1e-9);
}

TEST(TailLatency, PrefillsQueueBehindPrefills) {
  // Issue 12, item 4: a request's prefill waits behind the prefills queued
  // at its replica. The quickstart's replica: other requests' prefills at
  // 3.875/s, 69.44 ms each, one at a time.
  using namespace mlsc::q;
  using namespace mlsc::walls;
  RequestRate Rate = in<RequestRate>(3.875);
  Time S = in<Time>(69.44e-3);
  Number Equal = in<Number>(0);
  auto at = [&](double P) {
    return prefillWaitQuantile(Rate, S, Equal, in<Number>(P)).value();
  };
  // rho = 0.26908; Pollaczek-Khinchine for equal prompts: E[W] = rho S /
  // (2 (1 - rho)) = 12.782 ms. The wait is 0 with probability 1 - rho =
  // 0.731, so the median is 0; above, the tail is exponential with mean
  // E[W] / rho = 47.50 ms: the p99 is 47.50 x ln(0.26908 / 0.01) = 156.4 ms.
  double Rho = 3.875 * 69.44e-3;
  double Mean = Rho * 69.44e-3 / (2 * (1 - Rho));
  EXPECT_NEAR(Mean * 1e3, 12.782, 5e-4);
  EXPECT_EQ(at(0.5), 0.0);
  EXPECT_NEAR(at(0.99), Mean / Rho * std::log(Rho / 0.01), 1e-15);
  EXPECT_NEAR(at(0.99) * 1e3, 156.4, 0.05);
  // Twice the load, rho = 0.538: E[W] = 0.538 x 69.44 / (2 x 0.462) =
  // 40.45 ms, the p99 75.17 x ln(53.8) = 299.6 ms, 1.92 times the first.
  double Double =
      prefillWaitQuantile(in<RequestRate>(7.75), S, Equal, in<Number>(0.99))
          .value();
  EXPECT_NEAR(Double * 1e3, 299.6, 0.05);
  // Variable prompts (cs = 1) double the mean wait, and so the tail.
  EXPECT_NEAR(
      prefillWaitQuantile(Rate, S, in<Number>(1), in<Number>(0.99)).value(),
      2 * at(0.99), 1e-15);
  // Prefills alone fill the replica: the wait is unbounded.
  EXPECT_TRUE(std::isinf(
      prefillWaitQuantile(in<RequestRate>(20), S, Equal, in<Number>(0.5))
          .value()));
}

TEST(TailLatency, BatcherWindowsByHand) {
  // MLPerf v4.1's AMD harness: 73.5 req/s into a batcher of 300 ms and 96
  // requests at most. The window's arrivals are Poisson of mean 22.05,
  // which never reach 95: K = 1 + 22.05 = 23.05 requests a batch.
  using namespace mlsc::q;
  using namespace mlsc::walls;
  RequestRate Rate = in<RequestRate>(73.5);
  Time W = in<Time>(0.3);
  Number Cap = in<Number>(96);
  EXPECT_NEAR(batcherRequests(Rate, W, Cap).value(), 23.05, 1e-9);
  // The wait is uniform on [0, W] for the 22.05 of 23.05 that join, W for
  // the opener: p50 = 0.3 x 0.5 x 23.05 / 22.05 = 156.8 ms; p99 lies in
  // the opener's atom (0.99 > 22.05 / 23.05 = 0.9566): 300 ms.
  auto at = [&](RequestRate R, Number N, double P) {
    return batcherWaitQuantile(R, W, N, in<Number>(P)).value();
  };
  EXPECT_NEAR(at(Rate, Cap, 0.5) * 1e3, 156.8, 0.05);
  EXPECT_NEAR(at(Rate, in<Number>(0), 0.5), 0.15 * 23.05 / 22.05, 1e-12);
  EXPECT_EQ(at(Rate, Cap, 0.99), 0.3);
  // Without a bound: size CV^2 = 22.05 / 23.05^2, gaps W + Exp(1/r): CV^2
  // = 1 / 23.05^2.
  EXPECT_NEAR(batcherSizeCV2(Rate, W, in<Number>(0)).value(),
              22.05 / (23.05 * 23.05), 1e-12);
  EXPECT_NEAR(batcherGapCV2(Rate, W, in<Number>(0)).value(),
              1 / (23.05 * 23.05), 1e-12);
  // One request a batch: no wait, batches as Poisson as the arrivals.
  EXPECT_EQ(at(Rate, in<Number>(1), 0.5), 0.0);
  EXPECT_NEAR(batcherRequests(Rate, W, in<Number>(1)).value(), 1, 1e-12);
  EXPECT_NEAR(batcherGapCV2(Rate, W, in<Number>(1)).value(), 1, 1e-12);
  // No arrivals: the opener waits it all.
  EXPECT_EQ(at(in<RequestRate>(0), Cap, 0.5), 0.3);
  EXPECT_TRUE(std::isnan(at(in<RequestRate>(NAN), Cap, 0.5)));
}

TEST(TailLatency, BatcherCappedByHandAndByMonteCarlo) {
  // 100 req/s into a 45 ms window holding at most 3: C ~ Poisson(4.5), k =
  // 2. E[K] = 1 + P(C >= 1) + P(C >= 2) = 1 + (1 - e^-4.5) + (1 - 5.5
  // e^-4.5) = 2.927792 (e^-4.5 = 0.011109).
  using namespace mlsc::q;
  using namespace mlsc::walls;
  RequestRate Rate = in<RequestRate>(100);
  Time W = in<Time>(0.045);
  Number Three = in<Number>(3);
  double E = std::exp(-4.5);
  EXPECT_NEAR(batcherRequests(Rate, W, Three).value(),
              1 + (1 - E) + (1 - 5.5 * E), 1e-12);
  // A batch fills (T_2 < 45 ms) with probability P(C >= 2) = 0.9389, and
  // then its filler waits 0: the wait's atom at 0 is 0.9389 / 2.9278 =
  // 0.3207 of the requests.
  auto at = [&](double P) {
    return batcherWaitQuantile(Rate, W, Three, in<Number>(P)).value();
  };
  EXPECT_EQ(at(0.32), 0.0);
  EXPECT_GT(at(0.33), 0.0);
  // Against a Monte Carlo of the batcher (utils/batcher-monte-carlo.py
  // 100 0.045 3: 400,000 Poisson arrivals): waits p50 5.441 ms, p90 27.485
  // ms, p99 45 ms; sizes 2.9285 on average with squared CV 0.01026; gaps
  // between batches of squared CV 0.2893. The formulas: 5.4577, 27.4904
  // and 45 ms; 2.9278, 0.010407 and 0.287811.
  EXPECT_NEAR(at(0.5) * 1e3, 5.4577, 5e-4);
  EXPECT_NEAR(at(0.9) * 1e3, 27.4904, 5e-4);
  EXPECT_EQ(at(0.99), 0.045);
  EXPECT_NEAR(batcherSizeCV2(Rate, W, Three).value(), 0.010407, 1e-6);
  EXPECT_NEAR(batcherGapCV2(Rate, W, Three).value(), 0.287811, 1e-6);
  // AMD's window at a bound of 12 (it binds: Poisson(22.05) rarely stays
  // under 11): E[K] 11.9943 (the Monte Carlo, 73.5 0.3 12: 11.993), waits
  // p50 68.152 ms (68.187), p90 153.067 (153.57), p99 224.858 (225.87).
  RequestRate Amd = in<RequestRate>(73.5);
  Time Amdw = in<Time>(0.3);
  Number Twelve = in<Number>(12);
  EXPECT_NEAR(batcherRequests(Amd, Amdw, Twelve).value(), 11.994271, 1e-6);
  for (auto [P, Ms] : {std::pair{0.5, 68.152386}, std::pair{0.9, 153.066817},
                       std::pair{0.99, 224.857905}})
    EXPECT_NEAR(batcherWaitQuantile(Amd, Amdw, Twelve, in<Number>(P)).value() *
                    1e3,
                Ms, 1e-3)
        << P;
}

} // namespace

namespace {

TEST(TailLatencyWall, LognormalLengthQuantilesByHand) {
  // Mean 100, cv 1: sigma^2 = ln 2, mu = ln 100 - ln 2 / 2. The median is
  // e^mu = 100 / sqrt 2 = 70.71; the p99 e^(mu + 2.326348 sigma) = 490.49.
  using namespace mlsc::q;
  auto L = [](double Mean, double CV, double P) {
    return mlsc::walls::lengthQuantile(in<Tokens>(Mean), in<Number>(CV),
                                       in<Number>(P))
        .value();
  };
  EXPECT_NEAR(L(100, 1, 0.5), 100 / std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(L(100, 1, 0.99), 490.4917, 1e-3);
  // One length: every quantile is the mean; bad levels are NaN, not a
  // throw from Boost.Math.
  EXPECT_EQ(L(100, 0, 0.99), 100);
  EXPECT_TRUE(std::isnan(L(100, 1, 1.5)));
  EXPECT_TRUE(std::isnan(L(100, 1e300, 0.5)));
}

TEST(TailLatencyWall, CappedLognormalMeanByHand) {
  // Mean 100, cv 1, cut at 200: sigma^2 = ln 2, sigma = 0.832555, ln(c / m)
  // = ln 2; below: Phi((ln 2 - ln 2 / 2) / sigma) = Phi(0.416277) =
  // 0.661396, x 100 = 66.1396; above: 1 - Phi((ln 2 + ln 2 / 2) / sigma) =
  // 1 - Phi(1.248832) = 0.105863, x 200 = 21.1727; 87.3123 tokens (a
  // Monte Carlo of 400,000 draws gave 87.37).
  using namespace mlsc::q;
  auto M = [](double Mean, double CV, double Cap) {
    return mlsc::walls::cappedLengthMean(in<Tokens>(Mean), in<Number>(CV),
                                         in<Tokens>(Cap))
        .value();
  };
  EXPECT_NEAR(M(100, 1, 200), 87.3123, 1e-4);
  // A cap far above the mean leaves it; one length is cut only when
  // the cap is below it; no cap at all (infinity) is the mean.
  EXPECT_NEAR(M(100, 0.5, 1000), 100, 1e-4);
  EXPECT_EQ(M(100, 0, 80), 80);
  EXPECT_EQ(M(100, 0, 120), 100);
  EXPECT_EQ(M(100, 1, std::numeric_limits<double>::infinity()), 100);
  EXPECT_TRUE(std::isnan(M(100, -1, 50)));
  // A cap below the mean: 100 Phi(-1.248832) + 50 (1 - Phi(-0.416277)) =
  // 10.5863 + 33.0698 = 43.6562. A cv whose square underflows (1e-200) is
  // one length: min(100, 100), not 0 / 0.
  EXPECT_NEAR(M(100, 1, 50), 43.6562, 1e-4);
  EXPECT_EQ(M(100, 1e-200, 100), 100);
  EXPECT_EQ(M(100, 1e-200, 60), 60);
}

TEST(TailLatencyWall, CappedLognormalCVByHand) {
  // Mean 100, cv 1, cut at 200: E[min(n, c)^2] = 100^2 e^(ln 2) Phi((ln 2 -
  // 1.5 ln 2) / 0.832555) + 200^2 x 0.105863 = 20,000 Phi(-0.416277) +
  // 4,234.53 = 20,000 x 0.338604 + 4,234.53 = 11,006.60; with E = 87.3123
  // the variance is 11,006.60 - 7,623.44 = 3,383.16, sd 58.165, cv 0.66617
  // (a Monte Carlo of 400,000 draws gave 0.6664). Uncut, the cv is 1.
  using namespace mlsc::q;
  auto CV = [](double Mean, double Spread, double Cap) {
    return mlsc::walls::cappedLengthCV(in<Tokens>(Mean), in<Number>(Spread),
                                       in<Tokens>(Cap))
        .value();
  };
  EXPECT_NEAR(CV(100, 1, 200), 0.666172, 1e-6);
  EXPECT_NEAR(CV(100, 3, 200), 1.077843, 1e-6);
  // No cap is the draws' own spread; one length has none, cut or not.
  EXPECT_EQ(CV(100, 1, std::numeric_limits<double>::infinity()), 1);
  EXPECT_EQ(CV(100, 0, 50), 0);
  EXPECT_NEAR(CV(100, 1e-200, 100), 0, 1e-12);
  EXPECT_TRUE(std::isnan(CV(100, -1, 50)));
}

TEST(TailLatencyWall, LognormalLengthExceedanceByHand) {
  // The complement of the quantile above: the share of lengths over x.
  // Mean 100, cv 1: past the median 70.71, one half; past the p99 490.49,
  // 1%. Mean 1,000, cv 1 past 4,000: z = (ln 4,000 - ln 1,000 + ln 2 / 2)
  // / sqrt(ln 2) = 2.08139, 1.86993%.
  using namespace mlsc::q;
  auto X = [](double Mean, double CV, double Limit) {
    return mlsc::walls::lengthExceedance(in<Tokens>(Mean), in<Number>(CV),
                                         in<Tokens>(Limit))
        .value();
  };
  EXPECT_NEAR(X(100, 1, 100 / std::sqrt(2.0)), 0.5, 1e-12);
  EXPECT_NEAR(X(100, 1, 490.4917), 0.01, 1e-6);
  EXPECT_NEAR(X(1000, 1, 4000), 0.0186993, 1e-7);
  // One length: all or none; no room at all: all; a limit at infinity:
  // none; a negative spread is NaN, not a throw.
  EXPECT_EQ(X(100, 0, 99), 1);
  EXPECT_EQ(X(100, 0, 100), 0);
  EXPECT_EQ(X(100, 1, -5), 1);
  EXPECT_EQ(X(100, 1, std::numeric_limits<double>::infinity()), 0);
  EXPECT_TRUE(std::isnan(X(100, -1, 50)));
}

} // namespace

namespace {

/// ttft_sum_quantile with the slot's queue idle (no wait for a slot) unless
/// a test gives its own.
double sumQuantile(double First, double A50, double A99, double PromptCV,
                   double PrefillRate, double Prefill, double PrefillCV,
                   double Iteration, double PrefillShare, double Others,
                   double P, double LogC = -Inf, double Arrival = 1,
                   double Service = 1, double Servers = 1000) {
  return firstTokenSumQuantile(
             in<Time>(First), in<Time>(A50), in<Time>(A99),
             in<Number>(PromptCV), in<Number>(LogC), in<RequestRate>(Arrival),
             in<Time>(Service), in<Number>(Servers), in<Number>(1),
             in<RequestRate>(PrefillRate), in<Time>(Prefill),
             in<Number>(PrefillCV), in<Time>(Iteration),
             in<Number>(PrefillShare), in<Number>(Others), in<Number>(P))
      .value();
}

TEST(TailLatency, FirstTokenIsTheQuantileOfTheSumOfItsParts) {
  // A first token of 10 ms; the iteration in flight: q = 1 - e^-50 = 1,
  // uniform on [0, 12 ms]. The prefills queued ahead (chunked: no prefill
  // share, so apart from the iteration): rho = 100/s * 5 ms = 0.5, cs = 1,
  // so P(W > 0) = 0.5 and then an exponential of mean 5 (1 + 1) / (2 *
  // 0.5) = 10 ms (raw moments 10, 200, 6000). Two branches of weight 0.5:
  //  - no wait: 10 + U, the uniform exact;
  //  - a wait: 10 + U + E, mean 26, variance 12 + 100 = 112, mu3 0 + 2000
  //    (2 m^3), g = 2000 / 112^1.5 = 1.68734, w = 2 sinh(asinh(g/2)/3) =
  //    0.516514, sigma^2 = ln(1 + w^2) = 0.236484, m_Y = sd / w = 20.4893,
  //    shift 26 - 20.4893 = 5.5107 ms.
  // p50: t with 0.5 (t - 10) / 12 + 0.5 Phi((ln((t - 5.5107) / 20.4893) +
  // 0.118242) / 0.486296) = 0.5: t = 18.8592 ms (the branches at 0.7383
  // and 0.2617); p90: 32.9215 ms (at 1 and 0.8); p99: 54.9324 ms (at 1
  // and 0.98). A Monte Carlo of the same parts (10^6 draws) gives 18.95,
  // 32.67 and 55.78 ms; the sum of the parts' quantiles 16.00, 36.89 and
  // 61.00 ms (10 + 0 + 6, 10 + 10 ln 5 + 10.8, 10 + 10 ln 50 + 11.88).
  auto At = [](double P) {
    return sumQuantile(0.010, 0.010, 0.010, 0, 100, 0.005, 1, 0.012, 0, 50, P);
  };
  EXPECT_NEAR(At(0.5), 0.0188592, 1e-6);
  EXPECT_NEAR(At(0.9), 0.0329215, 1e-6);
  EXPECT_NEAR(At(0.99), 0.0549324, 1e-6);
}

TEST(TailLatency, ARareLongWaitStaysInItsBranch) {
  // A slot wait one request in a thousand meets (C = 0.1034%, mean 326.3
  // ms) beside a first token of 22.36 ms; at the replica (unchunked) an
  // arrival finds a prefill queued (rho = 0.875/s * 22.36 ms = 1.957%,
  // then exponential of mean 11.40 ms), a decode iteration in flight (q =
  // (1 - 0.0196)(1 - e^-1.968) = 84.34%, uniform on 7.48 ms) or neither.
  // A Monte Carlo (2 x 10^6 draws) puts p50 / p90 / p99 / p99.9 at 25.54 /
  // 29.06 / 31.07 / 80.20 ms. Three moments over all the parts at once
  // read the rare wait's third moment as skew everywhere (p99 70.5 ms);
  // conditioned on the waits, with a lone exponential or uniform taken
  // exactly, the branches give 25.54 / 29.06 / 31.14 / 79.13 ms.
  double S = 1.968, Lambda = 1, Servers = 8;
  double LogC =
      logErlangCOf(perSecond(Lambda), seconds(S), servers(Servers)).value();
  auto At = [&](double P) {
    return sumQuantile(0.02236, 0.02236, 0.02236, 0, 0.875, 0.02236, 0, 0.00748,
                       0.0196, 1.968, P, LogC, Lambda, S, Servers);
  };
  EXPECT_NEAR(At(0.5), 0.02554, 0.01 * 0.02554);
  EXPECT_NEAR(At(0.9), 0.02906, 0.01 * 0.02906);
  EXPECT_NEAR(At(0.99), 0.03107, 0.01 * 0.03107);
  EXPECT_NEAR(At(0.999), 0.08020, 0.03 * 0.08020);
}

TEST(TailLatency, NoWaitAtAllHoldsTheMedianAtTheFirstToken) {
  // Unchunked, an arrival waits for a queued prefill (rho = 0.05) or an
  // iteration in flight (q = 0.95 (1 - e^-0.5) = 0.3738), never both: the
  // 57.62% that find neither start at once, so the median TTFT is the
  // first token's 10 ms exactly (the parts added independently would put
  // some wait under every median).
  auto At = [](double P) {
    return sumQuantile(0.010, 0.010, 0.010, 0, 10, 0.005, 0, 0.010, 0.05, 0.5,
                       P);
  };
  EXPECT_DOUBLE_EQ(At(0.5), 0.010);
  // Above it each branch is one part, taken exactly: F(t) = 0.5762 +
  // 0.3738 (t - 10) / 10 + 0.05 (1 - e^-((t - 10) / 2.632)), the queued
  // prefill's mean 5 / (2 x 0.95) = 2.632 ms; F = 0.6 at t = 10.4335 ms.
  EXPECT_NEAR(At(0.6), 0.0104335, 1e-7);
}

TEST(TailLatency, FirstTokenSumConvergesWhereTheMixtureIsConcave) {
  // A review's fuzz found the solver stuck: a dominant narrow branch and a
  // rare, heavy one (a slot wait C = e^-7.38 beside a queued prefill), so
  // every Halley step left the bracket and the secant kept its lower end
  // (its Illinois weight halved once, not again): after 200 steps it gave
  // 13.43 s at p99.9 where the mixture's quantile was 18.28 ms (the Newton
  // solver before it: 0.01827504508 s on these inputs). Since December 2026
  // a first token whose p99 (8.263 ms) lies above its p50 (5.890 ms)
  // without a prompt spread (the prompts riding in its iteration) is
  // taken random, a normal through the two (sd 2.373 / 2.326 = 1.020 ms),
  // where before its p99.9 value was added as a constant: 21.34 ms, above
  // the 18.28 ms by about three of its sds' worth in the tail.
  auto At = [](double P) {
    return firstTokenSumQuantile(
               in<Time>(0.00825824), in<Time>(0.00589003), in<Time>(0.00826316),
               in<Number>(0), in<Number>(-7.38037), in<RequestRate>(0.422574),
               in<Time>(4.25961), in<Number>(2), in<Number>(1.77347),
               in<RequestRate>(0.00236111), in<Time>(0.0640439),
               in<Number>(0.161019), in<Time>(0.01002), in<Number>(0.000151215),
               in<Number>(14.8516), in<Number>(P))
        .value();
  };
  EXPECT_NEAR(At(0.999), 0.0213442, 1e-6);
  EXPECT_GT(At(0.999), 0.01827504508);
  EXPECT_LE(At(0.99), At(0.995));
  EXPECT_LE(At(0.995), At(0.999));
  EXPECT_LE(At(0.999), At(0.9999));
}

TEST(TailLatency, FirstTokenSumRisesWithThePercentile) {
  // Random inputs over wide ranges (the review's fuzz, fixed seed): each
  // quantile is at least the one below it. The stuck solver broke this
  // about once in 3,000 calls.
  std::mt19937_64 R(42);
  std::uniform_real_distribution<double> U(0, 1);
  auto Log = [&](double A, double B) {
    return std::exp(std::log(A) + U(R) * (std::log(B) - std::log(A)));
  };
  const double Ps[] = {0.01, 0.1,  0.3,   0.5,   0.7,   0.9,
                       0.95, 0.99, 0.995, 0.999, 0.9999};
  int Falls = 0, NaNs = 0;
  for (int T = 0; T < 3000; ++T) {
    double First = Log(1e-3, 1), A50 = First * Log(0.3, 1),
           A99 = First * Log(1, 5), Cv = U(R) < 0.5 ? 0 : Log(0.05, 3);
    double LogC = U(R) < 0.3 ? -Inf : std::log(Log(1e-6, 0.9));
    double Arrival = Log(0.1, 100), Service = Log(0.1, 10),
           Servers = std::ceil(Log(1, 200)), ServiceCV = Log(0.1, 2);
    if (Arrival * Service >= Servers)
      Arrival = 0.9 * Servers / Service;
    double Prefill = Log(1e-3, 0.5), Rho = Log(1e-4, 0.95),
           PrefillCV = Log(0.01, 3), Iteration = Log(1e-3, 0.1),
           Share = U(R) < 0.5 ? 0 : Rho, Others = Log(0.01, 100);
    double Last = -Inf;
    for (double P : Ps) {
      double X =
          firstTokenSumQuantile(
              in<Time>(First), in<Time>(A50), in<Time>(A99), in<Number>(Cv),
              in<Number>(LogC), in<RequestRate>(Arrival), in<Time>(Service),
              in<Number>(Servers), in<Number>(ServiceCV),
              in<RequestRate>(Rho / Prefill), in<Time>(Prefill),
              in<Number>(PrefillCV), in<Time>(Iteration), in<Number>(Share),
              in<Number>(Others), in<Number>(P))
              .value();
      NaNs += std::isnan(X);
      Falls += X < Last * (1 - 1e-7);
      Last = X;
    }
  }
  EXPECT_EQ(NaNs, 0);
  EXPECT_EQ(Falls, 0);
}

TEST(TailLatency, FirstTokenSumIsFloored) {
  // Never below the first token plus any one wait's own quantile: with
  // every wait at most a microsecond but for a queued prefill's (rho =
  // 0.5, exponential of mean 10 ms), the p99 is 10 ms + 10 ln 50 = 49.12
  // ms, what that wait alone gives.
  double P99 =
      sumQuantile(0.010, 0.010, 0.010, 0, 100, 0.005, 1, 1e-6, 0, 50, 0.99);
  EXPECT_GE(P99, 0.010 + 0.010 * std::log(50.0) - 1e-12);
  EXPECT_LT(P99, 0.010 + 0.010 * std::log(50.0) + 2e-6);
}

TEST(TailLatency, FirstTokenSumIgnoresTheOrderOfCalls) {
  // Each thread keeps the last branches it built: a result does not hang
  // on what was computed before it.
  auto A = [](double P) {
    return sumQuantile(0.010, 0.010, 0.010, 0, 100, 0.005, 1, 0.012, 0, 50, P);
  };
  auto B = [](double P) {
    return sumQuantile(0.020, 0.020, 0.020, 0, 10, 0.005, 0, 0.010, 0.05, 0.5,
                       P);
  };
  double A99 = A(0.99), B99 = B(0.99);
  EXPECT_EQ(A(0.99), A99);
  EXPECT_EQ(B(0.5), 0.020);
  EXPECT_EQ(A(0.99), A99);
  EXPECT_EQ(B(0.99), B99);
  EXPECT_NE(A99, B99);
}

TEST(TailLatency, OnePartVaryingKeepsItsOwnQuantile) {
  // Only the iteration in flight varies (no prefill queued, one prompt
  // length): the first token plus the residual's quantile, 10 + 11.88 ms.
  EXPECT_DOUBLE_EQ(
      sumQuantile(0.010, 0.010, 0.010, 0, 0, 0.005, 1, 0.012, 0, 50, 0.99),
      0.010 + 0.012 * 0.99);
  // Only the slot's wait varies: ttft_quantile's value, bit for bit.
  RequestRate L = perSecond(24);
  Time S = seconds(0.3);
  Number C = servers(8), CV = in<Number>(1), LogC = logErlangCOf(L, S, C);
  for (double P : {0.5, 0.9, 0.99, 0.999})
    EXPECT_EQ(
        sumQuantile(0.05, 0.05, 0.05, 0, 0, 0.005, 1, 0, 0, 0, P, LogC.value(),
                    24, 0.3, 8),
        ttftQuantileGiven(LogC, L, S, C, CV, in<Time>(0.05), in<Number>(P))
            .value())
        << P;
}

TEST(TailLatency, PromptSpreadEntersTheSumThroughItsQuantiles) {
  // A first token of 20 ms at the median prompt and 80 ms at its p99, cv
  // 1: sigma = sqrt(ln 2) = 0.832555, scale = 60 / (e^(0.832555 *
  // 2.326348) - 1) = 60 / 5.9366 = 10.107 ms, shift 9.893 ms: the first
  // token alone has mean 9.893 + 10.107 sqrt 2 = 24.19 ms. With the
  // iteration in flight as above, a Monte Carlo of the sum (10^6 draws)
  // gives a median of 26.56 ms and a p99 of 86.08 ms, where the sum of the
  // parts' quantiles gives 26.00 and 91.88 ms; the three moments land
  // within 3% of both.
  auto At = [](double First, double P) {
    return sumQuantile(First, 0.020, 0.080, 1, 0, 0.005, 1, 0.012, 0, 50, P);
  };
  EXPECT_NEAR(At(0.020, 0.5), 0.02656, 0.03 * 0.02656);
  EXPECT_NEAR(At(0.080, 0.99), 0.08608, 0.03 * 0.08608);
  // At least the first token's own quantile.
  EXPECT_GE(At(0.080, 0.99), 0.080);
}

TEST(TailLatency, ExclusiveWaitsAreNormalisedWhenTheShareIsNotRho) {
  // Unchunked, with a prefill share (0.1) given apart from rho = 120/s * 5
  // ms = 0.6: q = 0.9 (1 - e^-50) = 0.9 and rho + q = 1.5, so the
  // exclusive outcomes are scaled to 0.4 (a queued prefill, exponential of
  // mean 5 (1 + 1) / (2 x 0.4) = 12.5 ms) and 0.6 (the iteration's rest,
  // uniform on 10 ms), none left for neither. F(10 + x) = 0.4 (1 -
  // e^(-x / 12.5)) + 0.06 x: the median at x = 5.8438 ms (bisection), above
  // the floor's 10 + 4.44 ms. Unscaled, the weights summed to 1.5 and put
  // the median near 14.3 ms.
  EXPECT_NEAR(
      sumQuantile(0.010, 0.010, 0.010, 0, 120, 0.005, 1, 0.010, 0.1, 50, 0.5),
      0.0158438, 1e-7);
}

TEST(TailLatency, FirstTokenSumIsUnboundedOrUnknownWhenAPartIs) {
  // Prefills alone fill the replica (rho = 20/s * 0.1 s = 2): unbounded.
  EXPECT_TRUE(std::isinf(
      sumQuantile(0.010, 0.010, 0.010, 0, 20, 0.1, 1, 0.012, 0, 50, 0.5)));
  EXPECT_TRUE(std::isnan(
      sumQuantile(NAN, 0.010, 0.010, 0, 1, 0.005, 1, 0.012, 0, 50, 0.5)));
  // A percentile outside (0, 1) is unknown even when a part is unbounded.
  EXPECT_TRUE(std::isnan(
      sumQuantile(0.010, 0.010, 0.010, 0, 20, 0.1, 1, 0.012, 0, 50, 1.5)));
}

TEST(TailLatency, StaticBatchWaitByHandForOneLength) {
  // Batches of 11 one-length outputs: T = 2 + 10 x 2 = 22 ms. At 100 req/s
  // with 2.311 a batch the replica is busy rho = 100 x 0.022 / 2.311 =
  // 0.9520; an arrival then waits out the batch in flight, uniform on [0,
  // 22 ms]: W_p = 22 (p - (1 - rho)) / rho (eval/static-at-load.mls).
  const Time P = in<Time>(0.002), S = in<Time>(0.002);
  const Number K = in<Number>(2.2 + std::exp(-2.2)), Zero = in<Number>(0),
               Slots = in<Number>(8), One = in<Number>(1);
  const Tokens N = in<Tokens>(11), NoCap = in<Tokens>(0);
  const RequestRate L = in<RequestRate>(100);
  double Rho = 2.2 / K.value();
  EXPECT_NEAR(staticBatchBusyShare(L, P, S, K, N, Zero, NoCap).value(), Rho,
              1e-12);
  for (double Pr : {0.5, 0.9, 0.99})
    EXPECT_NEAR(staticBatchWaitQuantile(L, P, S, K, Slots, N, Zero, NoCap,
                                        in<Number>(Pr))
                    .value(),
                0.022 * (Pr - (1 - Rho)) / Rho, 1e-12);
  // Below 1 - rho nobody waits; at or past saturation the wait is
  // unbounded.
  EXPECT_EQ(staticBatchWaitQuantile(L, P, S, K, Slots, N, Zero, NoCap,
                                    in<Number>(0.04))
                .value(),
            0.0);
  // A bulk server is busy all the time well before it saturates: rho
  // rounds to 1 below the slots, and the wait stays the batch's rest.
  EXPECT_NEAR(staticBatchWaitQuantile(in<RequestRate>(200), P, S, K, Slots, N,
                                      Zero, NoCap, in<Number>(0.5))
                  .value(),
              0.011, 1e-12);
  // Full batches at the slots that cannot keep up: unbounded.
  EXPECT_EQ(staticBatchWaitQuantile(in<RequestRate>(400), P, S, Slots, Slots, N,
                                    Zero, NoCap, in<Number>(0.5))
                .value(),
            Inf);
  // One slot (batch 1 at any load) is stable while lambda T < 1.
  EXPECT_NEAR(staticBatchWaitQuantile(in<RequestRate>(10), P, S, One, One, N,
                                      Zero, NoCap, in<Number>(0.99))
                  .value(),
              0.022 * (0.99 - 0.78) / 0.22, 1e-12);
  // A batch's own time at a percentile: one length, T = 22 ms.
  EXPECT_NEAR(staticBatchTimeQuantile(P, S, K, N, Zero, NoCap, in<Number>(0.99))
                  .value(),
              0.022, 1e-15);
}

TEST(TailLatency, StaticBatchWaitMatchesARenewalProcessWithSpreadOutputs) {
  // Batches of 4 outputs drawn lognormal (mean 100, cv 0.5): T = 0.1 s +
  // (N - 1) x 10 ms, N the longest of the 4. Busy cycles back to back
  // with exponential idle gaps that make the busy share the formula's
  // rho; a Poisson arrival lands at a uniform time and waits out the
  // cycle it falls in. The quantiles of that wait, 400,000 arrivals,
  // against the formula's length-biased residual.
  const Time P = in<Time>(0.1), S = in<Time>(0.01);
  const Number K = in<Number>(4), CV = in<Number>(0.5);
  const Tokens Mean = in<Tokens>(100), NoCap = in<Tokens>(0);
  const RequestRate L = in<RequestRate>(1.5);
  double Rho = staticBatchBusyShare(L, P, S, K, Mean, CV, NoCap).value();
  double MeanN = longestOutputOfBatch(K, Mean, CV, NoCap).value();
  double MeanT = 0.1 + (MeanN - 1) * 0.01;
  ASSERT_NEAR(Rho, 1.5 * MeanT / 4, 1e-9);
  ASSERT_LT(Rho, 1.0);
  std::mt19937_64 Rng(7);
  double Sigma = std::sqrt(std::log1p(0.25)),
         Mu = std::log(100) - Sigma * Sigma / 2;
  std::lognormal_distribution<double> Draw(Mu, Sigma);
  std::exponential_distribution<double> Idle(
      (1 - Rho) > 0 ? Rho / ((1 - Rho) * MeanT) : 1);
  // The timeline: cycle start, end; then idle.
  std::vector<std::pair<double, double>> Cycles;
  double Now = 0;
  for (int I = 0; I < 200000; ++I) {
    double Longest = 0;
    for (int J = 0; J < 4; ++J)
      Longest = std::max(Longest, Draw(Rng));
    double T = 0.1 + std::max(Longest - 1, 0.0) * 0.01;
    Cycles.push_back({Now, Now + T});
    Now += T + Idle(Rng);
  }
  std::uniform_real_distribution<double> At(0, Now);
  std::vector<double> Waits;
  for (int I = 0; I < 400000; ++I) {
    double X = At(Rng);
    auto It =
        std::upper_bound(Cycles.begin(), Cycles.end(), X,
                         [](double V, const std::pair<double, double> &C) {
                           return V < C.first;
                         });
    double W = 0;
    if (It != Cycles.begin() && X < std::prev(It)->second)
      W = std::prev(It)->second - X;
    Waits.push_back(W);
  }
  std::sort(Waits.begin(), Waits.end());
  for (double Pr : {0.5, 0.9, 0.99}) {
    double Simulated = Waits[size_t(Pr * Waits.size())];
    double Formula =
        staticBatchWaitQuantile(L, P, S, K, K, Mean, CV, NoCap, in<Number>(Pr))
            .value();
    EXPECT_NEAR(Formula, Simulated, 0.02 * Simulated) << "p = " << Pr;
  }
}

TEST(TailLatency, LongestOfWideLognormalOutputs) {
  // One draw is its mean at any spread, and b draws never exceed b means
  // (E[max] <= E[sum]); cv 2 and 3 broke a grid uniform in n.
  const Tokens Mean = in<Tokens>(272), NoCap = in<Tokens>(0);
  for (double Cv : {0.5, 1.5, 2.0, 3.0, 100.0}) {
    EXPECT_NEAR(longestOutputOfBatch(in<Number>(1), Mean, in<Number>(Cv), NoCap)
                    .value(),
                272.0, 0.005 * 272)
        << "cv " << Cv;
    for (double B : {2.0, 8.0, 256.0})
      EXPECT_LE(longestOutputOfBatch(in<Number>(B), Mean, in<Number>(Cv), NoCap)
                    .value(),
                B * 272.0 * 1.005)
          << "cv " << Cv << ", b " << B;
  }
  // A cap far below a narrow spread's draws (500 at cv 0.05, cap 256):
  // every draw is cut to the cap.
  EXPECT_EQ(longestOutputOfBatch(in<Number>(8), in<Tokens>(500),
                                 in<Number>(0.05), in<Tokens>(256))
                .value(),
            256.0);
  // Never above the cap, however many draws.
  EXPECT_LE(longestOutputOfBatch(in<Number>(4096), Mean, in<Number>(100),
                                 in<Tokens>(2048))
                .value(),
            2048.0);
  // The larger of two at cv 2: 2 E[X] Phi(sigma / sqrt 2), sigma^2 = ln 5,
  // sigma = 1.26864, Phi(0.89706) = 0.81515: 272 x 1.63030 = 443.4.
  EXPECT_NEAR(
      longestOutputOfBatch(in<Number>(2), Mean, in<Number>(2), NoCap).value(),
      443.4, 0.005 * 443.4);
}

TEST(TailLatency, StaticRequestTpotCountsThePaddingOfTheOthers) {
  const Time S = in<Time>(0.002);
  const Tokens Mean = in<Tokens>(100), NoCap = in<Tokens>(0);
  // Alone (b = 1) a request decodes its own output: TPOT is the step at
  // any percentile and spread.
  for (double Pr : {0.5, 0.99})
    EXPECT_NEAR(staticRequestTpot(S, in<Number>(1), Mean, in<Number>(0.5),
                                  NoCap, in<Number>(Pr))
                    .value(),
                0.002, 1e-9);
  // One length: every request decodes the batch's one length.
  EXPECT_NEAR(staticRequestTpot(S, in<Number>(4), Mean, in<Number>(0), NoCap,
                                in<Number>(0.5))
                  .value(),
              0.002, 1e-15);
  // A cap without a spread: 11 tokens padded to the cap's 21, 2 x 20 / 10.
  EXPECT_NEAR(staticRequestTpot(S, in<Number>(2.222), in<Tokens>(11),
                                in<Number>(0), in<Tokens>(21), in<Number>(0.5))
                  .value(),
              0.004, 1e-15);
  // With others, a short output pads to their longest: p99 above p50,
  // both above the step.
  double P50 = staticRequestTpot(S, in<Number>(8), Mean, in<Number>(0.5), NoCap,
                                 in<Number>(0.5))
                   .value();
  double P99 = staticRequestTpot(S, in<Number>(8), Mean, in<Number>(0.5), NoCap,
                                 in<Number>(0.99))
                   .value();
  EXPECT_GT(P50, 0.002);
  EXPECT_GT(P99, P50);
  // Short draws (the 1st percentile of outputs of mean 20 at cv 3 is
  // below one token) still have a gap: TPOT never falls below the step.
  for (double B : {1.0, 1.02, 4.0})
    for (double Pr : {0.5, 0.99})
      EXPECT_GE(staticRequestTpot(S, in<Number>(B), in<Tokens>(20),
                                  in<Number>(3), NoCap, in<Number>(Pr))
                    .value(),
                0.002 * (1 - 1e-12))
          << "b " << B << ", p " << Pr;
}

} // namespace
