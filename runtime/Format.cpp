//===- Format.cpp - Numbers for people ------------------------------------===//

#include "runtime/Format.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc {

namespace {

/// Four significant digits for 1 <= |V| < 1000; whole numbers stay whole
/// (`80 GB`, `2 B`).
std::string mantissa(double V) {
  double A = std::fabs(V);
  if (V == std::floor(V))
    return fmt::format("{:.0f}", V);
  if (A >= 100)
    return fmt::format("{:.1f}", V);
  if (A >= 10)
    return fmt::format("{:.2f}", V);
  return fmt::format("{:.3f}", V);
}

/// Rounds to four significant digits so that 999.96 moves up a unit.
double roundSig(double V) {
  if (V == 0 || !std::isfinite(V))
    return V;
  double Exp = std::floor(std::log10(std::fabs(V)));
  double Scale = std::pow(10.0, 3 - Exp);
  return std::round(V * Scale) / Scale;
}

std::string withPrefix(double V, const std::string &Symbol,
                       bool SmallPrefixes) {
  static const struct {
    double Scale;
    const char *Prefix;
  } Prefixes[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"},
                  {1e6, "M"},  {1e3, "k"},  {1, ""},     {1e-3, "m"},
                  {1e-6, "u"}, {1e-9, "n"}, {1e-12, "p"}};
  double R = roundSig(V);
  double A = std::fabs(R);
  if (A == 0)
    return "0 " + Symbol;
  // Beyond a thousand of the largest prefix (a training run's 4.8e22
  // FLOP), scientific notation reads better than "48180 E".
  if (A >= 1e21)
    return fmt::format("{:.3e} {}", V, Symbol);
  for (const auto &P : Prefixes) {
    if (P.Scale < 1 && !SmallPrefixes)
      break;
    if (A >= P.Scale)
      return mantissa(roundSig(V / P.Scale)) + " " + P.Prefix + Symbol;
  }
  if (A >= 1e-3 && A < 1)
    return fmt::format("{:.4f} {}", R, Symbol);
  return fmt::format("{:.3e} {}", V, Symbol);
}

std::string time(double S) {
  double R = roundSig(S);
  double A = std::fabs(R);
  if (A == 0)
    return "0 s";
  if (A < 1)
    return withPrefix(S, "s", true);
  if (A < 60)
    return mantissa(R) + " s";
  if (A < 7200)
    return mantissa(roundSig(S / 60)) + " min";
  if (A < 172800)
    return mantissa(roundSig(S / 3600)) + " h";
  double Days = roundSig(S / 86400);
  return (std::fabs(Days) < 1000 ? mantissa(Days) : formatNumber(Days)) +
         " day";
}

} // namespace

std::string formatNumber(double V) {
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V > 0 ? "inf" : "-inf";
  double R = roundSig(V);
  double A = std::fabs(R);
  if (A == 0)
    return "0";
  if (A >= 1e6 || A < 1e-3)
    return fmt::format("{:.3e}", V);
  // Counts (devices, layers, parallel degrees) print as integers.
  if (V == std::floor(V))
    return fmt::format("{:.0f}", V);
  if (A >= 1000)
    return fmt::format("{:.0f}", R);
  if (A < 1)
    return fmt::format("{:.4f}", R);
  return mantissa(R);
}

std::string formatQuantity(double SI, const Dimension &D, bool IsBool) {
  if (IsBool)
    return SI != 0 ? "true" : "false";
  if (!std::isfinite(SI))
    return formatNumber(SI) + (D.isDimensionless() ? "" : " " + D.str());
  if (D.isDimensionless())
    return formatNumber(SI);
  if (D == Dimension::base(BaseDim::Time))
    return time(SI);
  std::string Symbol = D.str();
  // Masses in tonnes from a tonne up (143 t of CO2e, 1.2 kt), in grams
  // below a kilogram (0.12 g per token); volumes in litres.
  // A rate of mass or volume reads best an hour: a fleet's CO2e and water.
  if (Symbol == "kg/s")
    return formatQuantity(SI * 3600, Dimension::base(BaseDim::Mass), false) +
           "/h";
  if (Symbol == "m^3/s")
    return withPrefix(SI * 3600 * 1000, "L/h", true);
  if (Symbol == "kg" || Symbol.rfind("kg/", 0) == 0) {
    std::string Per = Symbol.substr(2);
    if (std::fabs(SI) >= 1000)
      return withPrefix(SI / 1000, "t" + Per, false);
    if (std::fabs(SI) < 1)
      return withPrefix(SI * 1000, "g" + Per, true);
    return formatNumber(SI) + " " + Symbol;
  }
  // Money a second reads best an hour: a node's cost or rent.
  if (Symbol == "USD/s")
    return formatNumber(SI * 3600) + " USD/h";
  // Large sums in full, four significant digits, with thousands separators:
  // 2,667,000 USD.
  if (Symbol == "USD" && std::fabs(SI) >= 1e4 && std::fabs(SI) < 1e15) {
    std::string Digits = fmt::format("{:.0f}", std::fabs(roundSig(SI)));
    std::string Grouped;
    for (size_t I = 0; I < Digits.size(); ++I) {
      if (I && (Digits.size() - I) % 3 == 0)
        Grouped += ',';
      Grouped += Digits[I];
    }
    return (SI < 0 ? "-" : "") + Grouped + " USD";
  }
  if (Symbol == "m^3" || Symbol.rfind("m^3/", 0) == 0)
    return withPrefix(SI * 1000, "L" + Symbol.substr(3), true);
  // Symbols that cannot take a prefix: money, reciprocals.
  if (Symbol.rfind("USD", 0) == 0 || Symbol.rfind("1/", 0) == 0)
    return formatNumber(SI) + " " + Symbol;
  // Milli-tokens and nano-bytes read as noise: sub-unit prefixes only for
  // energy and power.
  bool Small = Symbol == "W" || Symbol == "J";
  return withPrefix(SI, Symbol, Small);
}

} // namespace mlsc
