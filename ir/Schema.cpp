//===- Schema.cpp - Entity kinds, their fields and metrics ----------------===//

#include "ir/Schema.h"

#include "ir/Metrics.h"
#include "ir/Units.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"

namespace mlsc {

namespace {

std::vector<std::string> splitBars(llvm::StringRef S) {
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  S.split(Parts, '|', -1, false);
  std::vector<std::string> Out;
  for (llvm::StringRef P : Parts)
    Out.push_back(P.str());
  return Out;
}

Dimension dimensionOf(llvm::StringRef Unit) {
  if (Unit == "1")
    return Dimension();
  UnitParseError Err;
  std::optional<mlsc::Unit> U = parseUnit(Unit, Err);
  if (!U)
    llvm::report_fatal_error("Schema.def: bad unit `" + Unit + "`");
  return U->Dim;
}

/// The symbols of each named enumeration (ENUM_BEGIN ... ENUM_END).
const std::vector<std::pair<std::string, std::vector<std::string>>> &
enumerations() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>>
      Enums = [] {
        std::vector<std::pair<std::string, std::vector<std::string>>> E;
#define ENUM_BEGIN(Type) E.push_back({#Type, {}});
#define ENUM_VALUE(Type, Value, Symbol) E.back().second.push_back(Symbol);
#include "ir/Schema.def"
        return E;
      }();
  return Enums;
}

/// A FIELD's allowed symbols: a named enumeration's, or `a|b|c`.
std::vector<std::string> allowedSymbols(llvm::StringRef Arg) {
  for (const auto &[Name, Symbols] : enumerations())
    if (Arg == Name)
      return Symbols;
  return splitBars(Arg);
}

KindSchema &kindNamed(std::vector<KindSchema> &Kinds, llvm::StringRef Name) {
  for (KindSchema &K : Kinds)
    if (K.Name == Name)
      return K;
  llvm::report_fatal_error("Schema.def: field of undeclared kind `" + Name +
                           "`");
}

/// The field \p Path of kind \p Kind, which a \p Row of Schema.def names
/// (a quantity field when \p Quantity); a row naming none is a bug.
FieldSchema &fieldNamed(std::vector<KindSchema> &Kinds, llvm::StringRef Kind,
                        llvm::StringRef Path, llvm::StringRef Row,
                        bool Quantity) {
  // The row of that path (addField keeps it unique).
  FieldSchema *Found = nullptr;
  for (FieldSchema &F : kindNamed(Kinds, Kind).Fields)
    if (F.Path == Path)
      Found = &F;
  if (Found && (!Quantity || Found->Type == FieldType::Quantity))
    return *Found;
  llvm::report_fatal_error("Schema.def: " + Row + " of no " +
                           (Quantity ? "quantity " : "") + "field " + Kind +
                           "." + Path);
}

/// A kind's next FIELD row; a second row of one path is a mistake in
/// Schema.def (lookups would take the last, and the language reference
/// would list both).
void addField(KindSchema &K, FieldSchema F) {
  for (const FieldSchema &Old : K.Fields)
    if (Old.Path == F.Path)
      llvm::report_fatal_error(llvm::Twine("Schema.def: two FIELD rows of ") +
                               K.Name + "." + F.Path);
  K.Fields.push_back(std::move(F));
}

/// A field's DOMAIN or MODE_ONLY, given by one row.
template <class T>
void setOnce(T &Slot, T Value, const T &Unset, llvm::StringRef Row,
             llvm::StringRef Kind, llvm::StringRef Path) {
  if (Slot != Unset)
    llvm::report_fatal_error(llvm::Twine("Schema.def: two ") + Row +
                             " rows of " + Kind + "." + Path);
  Slot = std::move(Value);
}

std::vector<KindSchema> buildKinds() {
  std::vector<KindSchema> Kinds;
#define KIND(Name, Doc)                                                        \
  Kinds.push_back(KindSchema{#Name, Doc, {}, {}, {}, "", {}});
#include "ir/Schema.def"
#define VARIANTS(Kind, Field, Values)                                          \
  {                                                                            \
    KindSchema &K = kindNamed(Kinds, #Kind);                                   \
    K.VariantField = Field;                                                    \
    K.Variants = splitBars(Values);                                            \
  }
#include "ir/Schema.def"
#define FIELD(Kind, Path, Ty, Arg, Required, Doc)                              \
  {                                                                            \
    FieldSchema F{Path,     FieldType::Ty, Dimension(),      "", {},           \
                  Required, Doc,           ValueDomain::Any, ""};              \
    if (F.Type == FieldType::Quantity ||                                       \
        (F.Type == FieldType::Terms && *Arg)) {                                \
      F.Dim = dimensionOf(Arg);                                                \
      F.UnitSpelling = Arg;                                                    \
    } else {                                                                   \
      F.Allowed = allowedSymbols(Arg);                                         \
    }                                                                          \
    addField(kindNamed(Kinds, #Kind), std::move(F));                           \
  }
#include "ir/Schema.def"
#define DOMAIN(K, P, D)                                                        \
  setOnce(fieldNamed(Kinds, #K, P, "DOMAIN", true).Domain, ValueDomain::D,     \
          ValueDomain::Any, "DOMAIN", #K, P);
#include "ir/Schema.def"
#define MODE_ONLY(K, P, M)                                                     \
  setOnce(fieldNamed(Kinds, #K, P, "MODE_ONLY", false).OnlyMode,               \
          std::string(M), std::string(), "MODE_ONLY", #K, P);
#include "ir/Schema.def"
  // A scenario's metrics: the public rows of the graph contract.
  KindSchema &Scenario = kindNamed(Kinds, "scenario");
  for (const MetricInfo &M : allMetrics())
    (M.Vis == Visibility::Public ? Scenario.Metrics : Scenario.MoreMetrics)
        .push_back(MetricSchema{M.Name, M.IsBool, M.Dim, M.Unit, M.Doc});
  for (const PhaseInfo &P : allPhases())
    for (const PhaseMetricInfo &M : allPhaseMetrics())
      Scenario.MoreMetrics.push_back(MetricSchema{phaseMetricName(P.Id, M.Id),
                                                  false, M.Dim, M.Unit, M.Doc});
  return Kinds;
}

} // namespace

const FieldSchema *KindSchema::field(llvm::StringRef Path) const {
  for (const FieldSchema &F : Fields)
    if (F.Path == Path)
      return &F;
  return nullptr;
}

const MetricSchema *KindSchema::metric(llvm::StringRef Path) const {
  for (const MetricSchema &M : Metrics)
    if (M.Path == Path)
      return &M;
  for (const MetricSchema &M : MoreMetrics)
    if (M.Path == Path)
      return &M;
  return nullptr;
}

bool KindSchema::hasFieldsUnder(llvm::StringRef Prefix) const {
  std::string Dotted = Prefix.str() + ".";
  for (const FieldSchema &F : Fields)
    if (llvm::StringRef(F.Path).startswith(Dotted))
      return true;
  return false;
}

bool KindSchema::isVariant(llvm::StringRef Name) const {
  return llvm::is_contained(Variants, Name.str());
}

const std::vector<KindSchema> &allKinds() {
  static const std::vector<KindSchema> Kinds = buildKinds();
  return Kinds;
}

int enumIndex(llvm::StringRef Type, llvm::StringRef Symbol) {
  for (const auto &[Name, Symbols] : enumerations())
    if (Type == Name) {
      auto It = llvm::find(Symbols, Symbol.str());
      return It == Symbols.end() ? -1 : static_cast<int>(It - Symbols.begin());
    }
  llvm::report_fatal_error("Schema.def: no enumeration `" + Type + "`");
}

const KindSchema *findKind(llvm::StringRef Name) {
  for (const KindSchema &K : allKinds())
    if (K.Name == Name)
      return &K;
  return nullptr;
}

std::string describeFieldType(const FieldSchema &F) {
  switch (F.Type) {
  case FieldType::Quantity:
    return F.Dim.describe();
  case FieldType::Entity:
    return "a reference to " + llvm::join(F.Allowed, " or ");
  case FieldType::Enum:
    return "one of " + llvm::join(F.Allowed, ", ");
  case FieldType::String:
    return "a string";
  case FieldType::Date:
    return "a date (YYYY-MM-DD)";
  case FieldType::Bool:
    return "true or false";
  case FieldType::Constraints:
    return "a block of conditions";
  case FieldType::Terms:
    if (!F.UnitSpelling.empty())
      return "a histogram, one bin a line `WEIGHT in LO .. HI`: a weight of "
             "at least 0, LO and HI each " +
             F.Dim.describe();
    return "a block of expressions";
  }
  return "";
}

std::string withArticle(llvm::StringRef Noun) {
  bool Vowel = !Noun.empty() && llvm::StringRef("aeiouAEIOU").contains(Noun[0]);
  return (Vowel ? "an " : "a ") + Noun.str();
}

std::string closestMatch(llvm::StringRef Word,
                         const std::vector<std::string> &Candidates,
                         size_t *Budget) {
  constexpr size_t LongestWord = 64;
  if (Word.size() > LongestWord)
    return "";
  std::string Best;
  // A third of the word may differ, never fewer than two edits; a third
  // of the longer word when the two begin alike (`thruput` is three edits
  // from `throughput`; `num_layers` is not taken for `dense_layers`).
  auto limitFor = [&](const std::string &C) {
    size_t Longer = llvm::StringRef(C).startswith(Word.take_front(3))
                        ? std::max(C.size(), Word.size())
                        : Word.size();
    return std::max<unsigned>(2, static_cast<unsigned>(Longer) / 3);
  };
  unsigned BestDistance = static_cast<unsigned>(LongestWord) + 1;
  for (const std::string &C : Candidates) {
    // The distance is at least the difference in length.
    size_t Gap = C.size() > Word.size() ? C.size() - Word.size()
                                        : Word.size() - C.size();
    unsigned Bound = std::min(BestDistance, limitFor(C) + 1);
    if (Gap >= Bound)
      continue;
    if (Budget) {
      if (*Budget == 0)
        return "";
      --*Budget;
    }
    unsigned D = llvm::StringRef(C).edit_distance(Word, true, Bound);
    if (D < Bound) {
      BestDistance = D;
      Best = C;
    }
  }
  // A name that differs in case alone is the one meant (`mi300x` is
  // `MI300X`). Past one edit, a word that starts candidates (in any case)
  // names one of them more surely than a name a couple of edits away:
  // `H10` is `H100_SXM` when that is the only one it starts, and `H100`,
  // which starts several, gets no suggestion rather than `B200` (the
  // suggestion is also a fix-it).
  for (const std::string &C : Candidates)
    if (C.size() == Word.size() && llvm::StringRef(C).equals_insensitive(Word))
      return C;
  if (BestDistance > 1 && Word.size() >= 3) {
    const std::string *Prefixed = nullptr;
    size_t Count = 0;
    bool BestStarts = false;
    for (const std::string &C : Candidates)
      if (C.size() > Word.size() &&
          llvm::StringRef(C).startswith_insensitive(Word)) {
        ++Count;
        Prefixed = &C;
        BestStarts |= C == Best;
      }
    if (Count == 1)
      return *Prefixed;
    if (Count > 1 && !BestStarts)
      return "";
  }
  return Best;
}

} // namespace mlsc
