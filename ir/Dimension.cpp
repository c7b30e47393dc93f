//===- Dimension.cpp - Physical dimensions of mlsc values -----------------===//

#include "ir/Dimension.h"

#include <cstdlib>

namespace mlsc {

const char *baseDimSymbol(BaseDim D) {
  static const char *const Symbols[NumBaseDims] = {
      "s", "m", "kg", "J", "B", "FLOP", "USD", "tok", "req", "sample"};
  return Symbols[static_cast<unsigned>(D)];
}

Dimension Dimension::operator*(const Dimension &O) const {
  Dimension R;
  for (unsigned I = 0; I < NumBaseDims; ++I)
    R.Exps[I] = static_cast<int8_t>(Exps[I] + O.Exps[I]);
  return R;
}

Dimension Dimension::operator/(const Dimension &O) const {
  Dimension R;
  for (unsigned I = 0; I < NumBaseDims; ++I)
    R.Exps[I] = static_cast<int8_t>(Exps[I] - O.Exps[I]);
  return R;
}

std::optional<Dimension> Dimension::checkedProduct(const Dimension &O,
                                                   bool Divide) const {
  Dimension R;
  for (unsigned I = 0; I < NumBaseDims; ++I) {
    int E = Exps[I] + (Divide ? -O.Exps[I] : O.Exps[I]);
    if (E > 100 || E < -100)
      return std::nullopt;
    R.Exps[I] = static_cast<int8_t>(E);
  }
  return R;
}

std::optional<Dimension> Dimension::pow(int N) const {
  Dimension R;
  for (unsigned I = 0; I < NumBaseDims; ++I) {
    long E = static_cast<long>(Exps[I]) * N;
    if (E > 100 || E < -100)
      return std::nullopt;
    R.Exps[I] = static_cast<int8_t>(E);
  }
  return R;
}

std::optional<Dimension> Dimension::root(int N) const {
  Dimension R;
  for (unsigned I = 0; I < NumBaseDims; ++I) {
    if (Exps[I] % N != 0)
      return std::nullopt;
    R.Exps[I] = static_cast<int8_t>(Exps[I] / N);
  }
  return R;
}

static void appendFactor(std::string &Out, const char *Symbol, int Power) {
  if (!Out.empty())
    Out += '*';
  Out += Symbol;
  if (Power != 1)
    Out += "^" + std::to_string(Power);
}

std::string Dimension::str() const {
  std::array<int, NumBaseDims> E;
  for (unsigned I = 0; I < NumBaseDims; ++I)
    E[I] = Exps[I];
  // Power reads better as W than as J/s.
  bool Watts = false;
  unsigned EnergyIdx = static_cast<unsigned>(BaseDim::Energy);
  unsigned TimeIdx = static_cast<unsigned>(BaseDim::Time);
  if (E[EnergyIdx] == 1 && E[TimeIdx] == -1) {
    Watts = true;
    E[EnergyIdx] = 0;
    E[TimeIdx] = 0;
  }
  std::string Num, Den;
  if (Watts)
    Num = "W";
  for (unsigned I = 0; I < NumBaseDims; ++I) {
    const char *Symbol = baseDimSymbol(static_cast<BaseDim>(I));
    if (E[I] > 0)
      appendFactor(Num, Symbol, E[I]);
  }
  for (unsigned I = 0; I < NumBaseDims; ++I) {
    const char *Symbol = baseDimSymbol(static_cast<BaseDim>(I));
    if (E[I] < 0) {
      Den += '/';
      Den += Symbol;
      if (E[I] != -1)
        Den += "^" + std::to_string(-E[I]);
    }
  }
  if (Num.empty())
    Num = "1";
  return Num + Den;
}

std::string Dimension::description() const {
  static const struct {
    const char *Canonical;
    const char *Name;
  } Names[] = {
      {"1", "a dimensionless number"},
      {"s", "a time"},
      {"1/s", "a frequency"},
      {"m", "a length"},
      {"m^3", "a volume"},
      {"kg", "a mass"},
      {"J", "an energy"},
      {"W", "a power"},
      {"B", "a data size"},
      {"B/s", "a bandwidth"},
      {"FLOP", "a compute amount"},
      {"FLOP/s", "a compute rate"},
      {"FLOP/B", "an arithmetic intensity"},
      {"USD", "an amount of money"},
      {"USD/s", "a cost rate"},
      {"USD/J", "an energy price"},
      {"USD/tok", "a cost per token"},
      {"kg/J", "a carbon intensity"},
      {"m^3/J", "a water intensity"},
      {"tok", "a token count"},
      {"tok/s", "a token rate"},
      {"req", "a request count"},
      {"req/s", "a request rate"},
      {"sample", "a sample count"},
      {"sample/s", "a sample rate"},
      {"J/tok", "an energy per token"},
      {"B/tok", "a data size per token"},
      {"FLOP/tok", "a compute amount per token"},
      {"s/tok", "a time per token"},
  };
  std::string S = str();
  for (const auto &N : Names)
    if (S == N.Canonical)
      return N.Name;
  return "";
}

std::string Dimension::describe() const {
  std::string Name = description();
  std::string Bracket = "[" + str() + "]";
  return Name.empty() ? Bracket : Name + " " + Bracket;
}

} // namespace mlsc
