//===- Quantities.h - Boost.Units types for formulas ---------------*- C++
//-*-===//
//
// The C++ mirror of Dimension.h: the same ten base dimensions as a
// Boost.Units system, so each formula's dimensions are checked by the C++
// compiler. Quantities are zero-cost wrappers over double in SI base units;
// the evaluator calls the same formula functions on plain doubles through
// `Q::from_value`. dimensionOf<Q>() turns a quantity type into the runtime
// Dimension, so the graph can check its wiring against formula signatures.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_WALLS_QUANTITIES_H
#define MLSC_RUNTIME_WALLS_QUANTITIES_H

#include "ir/Dimension.h"

#include <boost/units/base_dimension.hpp>
#include <boost/units/base_unit.hpp>
#include <boost/units/cmath.hpp>
#include <boost/units/dimension.hpp>
#include <boost/units/dimensionless_type.hpp>
#include <boost/units/make_system.hpp>
#include <boost/units/quantity.hpp>
#include <boost/units/static_rational.hpp>
#include <boost/units/unit.hpp>

#include <string>
#include <utility>

namespace mlsc::q {

namespace bu = boost::units;

// Base dimensions. Ordinals only need to be unique within the program.
struct TimeBase : bu::base_dimension<TimeBase, 1001> {};
struct LengthBase : bu::base_dimension<LengthBase, 1002> {};
struct MassBase : bu::base_dimension<MassBase, 1003> {};
struct EnergyBase : bu::base_dimension<EnergyBase, 1004> {};
struct DataBase : bu::base_dimension<DataBase, 1005> {};
struct ComputeBase : bu::base_dimension<ComputeBase, 1006> {};
struct MoneyBase : bu::base_dimension<MoneyBase, 1007> {};
struct TokenBase : bu::base_dimension<TokenBase, 1008> {};
struct RequestBase : bu::base_dimension<RequestBase, 1009> {};
struct SampleBase : bu::base_dimension<SampleBase, 1010> {};

#define MLSC_BASE_UNIT(Name, Dim, Ordinal, Sym)                                \
  struct Name : bu::base_unit<Name, Dim::dimension_type, Ordinal> {            \
    static std::string name() { return Sym; }                                  \
    static std::string symbol() { return Sym; }                                \
  };
MLSC_BASE_UNIT(SecondUnit, TimeBase, 1101, "s")
MLSC_BASE_UNIT(MetreUnit, LengthBase, 1102, "m")
MLSC_BASE_UNIT(KilogramUnit, MassBase, 1103, "kg")
MLSC_BASE_UNIT(JouleUnit, EnergyBase, 1104, "J")
MLSC_BASE_UNIT(ByteUnit, DataBase, 1105, "B")
MLSC_BASE_UNIT(FlopUnit, ComputeBase, 1106, "FLOP")
MLSC_BASE_UNIT(DollarUnit, MoneyBase, 1107, "USD")
MLSC_BASE_UNIT(TokenUnit, TokenBase, 1108, "tok")
MLSC_BASE_UNIT(RequestUnit, RequestBase, 1109, "req")
MLSC_BASE_UNIT(SampleUnit, SampleBase, 1110, "sample")
#undef MLSC_BASE_UNIT

using System = bu::make_system<SecondUnit, MetreUnit, KilogramUnit, JouleUnit,
                               ByteUnit, FlopUnit, DollarUnit, TokenUnit,
                               RequestUnit, SampleUnit>::type;

template <class D> using Q = bu::quantity<bu::unit<D, System>, double>;

// The quantities formulas use. Names say what they are.
using Number = Q<bu::dimensionless_type>;
using Time = Q<TimeBase::dimension_type>;
using Energy = Q<EnergyBase::dimension_type>;
using Bytes = Q<DataBase::dimension_type>;
using Flops = Q<ComputeBase::dimension_type>;
using Money = Q<MoneyBase::dimension_type>;
using Mass = Q<MassBase::dimension_type>;
using Tokens = Q<TokenBase::dimension_type>;
using Requests = Q<RequestBase::dimension_type>;
using Samples = Q<SampleBase::dimension_type>;
using Length = Q<LengthBase::dimension_type>;

/// The quantity type of A / B.
template <class A, class B>
using Per = decltype(std::declval<A>() / std::declval<B>());

using Power = Per<Energy, Time>;
using Bandwidth = Per<Bytes, Time>;
using FlopRate = Per<Flops, Time>;
using Intensity = Per<Flops, Bytes>;
using BytesPerToken = Per<Bytes, Tokens>;
using TokenRate = Per<Tokens, Time>;
using RequestRate = Per<Requests, Time>;
using SampleRate = Per<Samples, Time>;
using FlopsPerToken = Per<Flops, Tokens>;
using EnergyPerToken = Per<Energy, Tokens>;
using Volume = decltype(std::declval<Length>() * std::declval<Length>() *
                        std::declval<Length>());
using CarbonIntensity = Per<Mass, Energy>;
using WaterIntensity = Per<Volume, Energy>;
using EnergyPrice = Per<Money, Energy>;
using MoneyRate = Per<Money, Time>;
using MassRate = Per<Mass, Time>;
using MoneyPerPower = Per<Money, Power>;

/// A quantity of type Q holding \p SI (in base units).
template <class QT> QT in(double SI) { return QT::from_value(SI); }

/// One token: turns a count of positions into tokens.
inline const Tokens OneToken = in<Tokens>(1.0);
/// Two FLOPs (a multiply and an add) per parameter per token.
inline const FlopsPerToken TwoPerToken = in<FlopsPerToken>(2.0);

namespace detail {

template <class Tag> struct BaseOf;
template <> struct BaseOf<TimeBase> {
  static constexpr BaseDim V = BaseDim::Time;
};
template <> struct BaseOf<LengthBase> {
  static constexpr BaseDim V = BaseDim::Length;
};
template <> struct BaseOf<MassBase> {
  static constexpr BaseDim V = BaseDim::Mass;
};
template <> struct BaseOf<EnergyBase> {
  static constexpr BaseDim V = BaseDim::Energy;
};
template <> struct BaseOf<DataBase> {
  static constexpr BaseDim V = BaseDim::Data;
};
template <> struct BaseOf<ComputeBase> {
  static constexpr BaseDim V = BaseDim::Compute;
};
template <> struct BaseOf<MoneyBase> {
  static constexpr BaseDim V = BaseDim::Money;
};
template <> struct BaseOf<TokenBase> {
  static constexpr BaseDim V = BaseDim::Token;
};
template <> struct BaseOf<RequestBase> {
  static constexpr BaseDim V = BaseDim::Request;
};
template <> struct BaseOf<SampleBase> {
  static constexpr BaseDim V = BaseDim::Sample;
};

template <class List> struct Walk;
template <> struct Walk<bu::dimensionless_type> {
  static Dimension apply() { return Dimension(); }
};
template <class Head, class Tail> struct Walk<bu::list<Head, Tail>> {
  static Dimension apply() {
    using R = typename Head::value_type;
    static_assert(R::Denominator == 1, "fractional powers are not used");
    return Dimension::base(BaseOf<typename Head::tag_type>::V,
                           static_cast<int>(R::Numerator)) *
           Walk<Tail>::apply();
  }
};

} // namespace detail

/// The runtime Dimension of quantity type \p QT.
template <class QT> Dimension dimensionOf() {
  return detail::Walk<typename QT::unit_type::dimension_type>::apply();
}

} // namespace mlsc::q

#endif
