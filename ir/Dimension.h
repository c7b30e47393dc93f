//===- Dimension.h - Physical dimensions of mlsc values ----------*- C++
//-*-===//
//
// A dimension is a vector of integer exponents over the base dimensions below.
// Dimensions are checked once, at compile time; the evaluator then runs on
// plain doubles in SI base units (see docs/language.md, "Units").
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_DIMENSION_H
#define MLSC_IR_DIMENSION_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace mlsc {

/// The base dimensions. Energy is a base dimension, not kg*m^2/s^2: mlsc does
/// not model mechanics, and a carbon intensity (g/kWh) must read as mass per
/// energy. Data (byte), compute (FLOP), money (USD) and the counts users
/// reason about (tokens, requests, samples) are base dimensions too.
enum class BaseDim : uint8_t {
  Time,
  Length,
  Mass,
  Energy,
  Data,
  Compute,
  Money,
  Token,
  Request,
  Sample,
};
inline constexpr unsigned NumBaseDims = 10;

/// Symbol of each base dimension's base unit: s m kg J B FLOP USD tok req
/// sample.
const char *baseDimSymbol(BaseDim D);

class Dimension {
public:
  constexpr Dimension() : Exps{} {}

  static Dimension dimensionless() { return Dimension(); }
  static Dimension base(BaseDim D, int Power = 1) {
    Dimension R;
    R.Exps[static_cast<unsigned>(D)] = static_cast<int8_t>(Power);
    return R;
  }

  int exponent(BaseDim D) const { return Exps[static_cast<unsigned>(D)]; }
  bool isDimensionless() const { return *this == Dimension(); }

  Dimension operator*(const Dimension &O) const;
  Dimension operator/(const Dimension &O) const;
  /// The product (or, with \p Divide, the quotient) with \p O; nullopt when
  /// an exponent would leave [-100, 100] (the exponents are 8 bits wide,
  /// and wrapped, s^256 would read as dimensionless).
  std::optional<Dimension> checkedProduct(const Dimension &O,
                                          bool Divide = false) const;
  /// Raises to an integer power; nullopt when an exponent overflows.
  std::optional<Dimension> pow(int N) const;
  /// Divides every exponent by N; nullopt unless all are divisible.
  std::optional<Dimension> root(int N) const;

  bool operator==(const Dimension &O) const { return Exps == O.Exps; }
  bool operator!=(const Dimension &O) const { return !(*this == O); }
  bool operator<(const Dimension &O) const { return Exps < O.Exps; }

  /// Canonical unit spelling: `B/s`, `FLOP/s`, `W`, `kg/J`, `1`.
  std::string str() const;
  /// A name for the dimension when it has one ("a bandwidth"), else "".
  std::string description() const;
  /// "a bandwidth [B/s]", or "[kg*m/s]" when unnamed.
  std::string describe() const;

private:
  std::array<int8_t, NumBaseDims> Exps;
};

} // namespace mlsc

#endif
