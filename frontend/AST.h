//===- AST.h - The abstract syntax tree of a .mls file ----------*- C++ -*-===//
//
// Built from the ANTLR parse tree by frontend/Parser.cpp; nothing of ANTLR
// survives. One class per concept, LLVM-style RTTI (isa/dyn_cast) on the
// expression hierarchy. Every node carries the source range it came from.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_FRONTEND_AST_H
#define MLSC_FRONTEND_AST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlsc::ast {

/// The source text a range covers (`ttft.p99 < 500 ms`), or "" when the
/// range is invalid.
inline std::string sourceText(llvm::SMRange R) {
  if (!R.isValid())
    return "";
  return std::string(R.Start.getPointer(), R.End.getPointer());
}

/// A dotted name (`H100_SXM.hbm.bandwidth`), with the range of each part.
struct Path {
  std::vector<std::string> Parts;
  std::vector<llvm::SMRange> PartRanges;
  llvm::SMRange Range;

  std::string str() const;
};

// ------------------------------------------------------------- expressions

class Expr {
public:
  enum class Kind {
    Number,
    String,
    Date,
    Bool,
    Ref,
    Call,
    Unary,
    Binary,
    List,
    Range,
    Error,
  };

  Kind kind() const { return K; }
  llvm::SMRange range() const { return R; }
  /// Widens the range to the parentheses around the expression.
  void setRange(llvm::SMRange Wider) { R = Wider; }
  virtual ~Expr() = default;

protected:
  Expr(Kind K, llvm::SMRange R) : K(K), R(R) {}

private:
  Kind K;
  llvm::SMRange R;
};

using ExprPtr = std::unique_ptr<Expr>;

/// `3.35 TB/s` or `42`: the number as written and its unit text.
class NumberExpr : public Expr {
public:
  NumberExpr(llvm::SMRange R, std::string NumberText, std::string UnitText,
             llvm::SMRange UnitRange)
      : Expr(Kind::Number, R), NumberText(std::move(NumberText)),
        UnitText(std::move(UnitText)), UnitRange(UnitRange) {}
  std::string NumberText; ///< digits as written, underscores kept
  std::string UnitText;   ///< "" for a plain number
  llvm::SMRange UnitRange;
  static bool classof(const Expr *E) { return E->kind() == Kind::Number; }
};

class StringExpr : public Expr {
public:
  StringExpr(llvm::SMRange R, std::string Value)
      : Expr(Kind::String, R), Value(std::move(Value)) {}
  std::string Value; ///< unescaped
  static bool classof(const Expr *E) { return E->kind() == Kind::String; }
};

class DateExpr : public Expr {
public:
  DateExpr(llvm::SMRange R, int Year, int Month, int Day)
      : Expr(Kind::Date, R), Year(Year), Month(Month), Day(Day) {}
  int Year, Month, Day;
  static bool classof(const Expr *E) { return E->kind() == Kind::Date; }
};

class BoolExpr : public Expr {
public:
  BoolExpr(llvm::SMRange R, bool Value) : Expr(Kind::Bool, R), Value(Value) {}
  bool Value;
  static bool classof(const Expr *E) { return E->kind() == Kind::Bool; }
};

/// A name or dotted path: a field, an entity, a let, an enum symbol.
class RefExpr : public Expr {
public:
  RefExpr(llvm::SMRange R, Path P) : Expr(Kind::Ref, R), Name(std::move(P)) {}
  Path Name;
  static bool classof(const Expr *E) { return E->kind() == Kind::Ref; }
};

class CallExpr : public Expr {
public:
  CallExpr(llvm::SMRange R, std::string Callee, llvm::SMRange CalleeRange,
           std::vector<ExprPtr> Args)
      : Expr(Kind::Call, R), Callee(std::move(Callee)),
        CalleeRange(CalleeRange), Args(std::move(Args)) {}
  std::string Callee;
  llvm::SMRange CalleeRange;
  std::vector<ExprPtr> Args;
  static bool classof(const Expr *E) { return E->kind() == Kind::Call; }
};

enum class UnaryOp { Negate, Plus, Not };
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  In,
  And,
  Or,
};

const char *spelling(UnaryOp Op);
const char *spelling(BinaryOp Op);

class UnaryExpr : public Expr {
public:
  UnaryExpr(llvm::SMRange R, UnaryOp Op, llvm::SMRange OpRange, ExprPtr Operand)
      : Expr(Kind::Unary, R), Op(Op), OpRange(OpRange),
        Operand(std::move(Operand)) {}
  UnaryOp Op;
  llvm::SMRange OpRange;
  ExprPtr Operand;
  static bool classof(const Expr *E) { return E->kind() == Kind::Unary; }
};

class BinaryExpr : public Expr {
public:
  BinaryExpr(llvm::SMRange R, BinaryOp Op, llvm::SMRange OpRange, ExprPtr LHS,
             ExprPtr RHS)
      : Expr(Kind::Binary, R), Op(Op), OpRange(OpRange), LHS(std::move(LHS)),
        RHS(std::move(RHS)) {}
  BinaryOp Op;
  llvm::SMRange OpRange;
  ExprPtr LHS, RHS;
  static bool classof(const Expr *E) { return E->kind() == Kind::Binary; }
};

class ListExpr : public Expr {
public:
  ListExpr(llvm::SMRange R, std::vector<ExprPtr> Items)
      : Expr(Kind::List, R), Items(std::move(Items)) {}
  std::vector<ExprPtr> Items;
  static bool classof(const Expr *E) { return E->kind() == Kind::List; }
};

/// `lo .. hi` or `lo .. hi step s`.
class RangeExpr : public Expr {
public:
  RangeExpr(llvm::SMRange R, ExprPtr Lo, ExprPtr Hi, ExprPtr Step)
      : Expr(Kind::Range, R), Lo(std::move(Lo)), Hi(std::move(Hi)),
        Step(std::move(Step)) {}
  ExprPtr Lo, Hi, Step; ///< Step may be null
  static bool classof(const Expr *E) { return E->kind() == Kind::Range; }
};

/// Stands in for an expression that failed to parse or build; passes skip it
/// without further diagnostics.
class ErrorExpr : public Expr {
public:
  explicit ErrorExpr(llvm::SMRange R) : Expr(Kind::Error, R) {}
  static bool classof(const Expr *E) { return E->kind() == Kind::Error; }
};

// ------------------------------------------------------------ block items

/// `from SOURCE` and `note "..."` after a value.
struct Provenance {
  std::optional<Path> FromSource;
  std::vector<std::string> Notes;
};

struct Item;
using ItemList = std::vector<Item>;

/// One item of a `{ ... }` block: `path = value`, `path { ... }` or a bare
/// constraint expression (inside `sla { ... }` and the like).
struct Item {
  enum class Kind { Assign, Block, Constraint };
  Kind K;
  Path Target;         ///< Assign and Block
  ExprPtr Value;       ///< Assign: the value; Constraint: the expression
  Provenance Prov;     ///< Assign only
  ItemList Children;   ///< Block only
  llvm::SMRange Range; ///< the whole item
};

// ------------------------------------------------------------ declarations

struct ImportDecl {
  Path Module;
  llvm::SMRange Range;
};

struct AssertDecl {
  ExprPtr Condition;
  std::string Message; ///< "" when none was written
  llvm::SMRange Range;
};

struct LetDecl {
  std::string Name;
  llvm::SMRange NameRange;
  ExprPtr Value;
  Provenance Prov;
  llvm::SMRange Range;
};

/// `KIND NAME (: BASE)? { items }`.
struct EntityDecl {
  std::string Kind;
  llvm::SMRange KindRange;
  std::string Name;
  llvm::SMRange NameRange;
  std::optional<std::string> Base;
  llvm::SMRange BaseRange;
  ItemList Items;
  llvm::SMRange Range;
  /// Error recovery touched the declaration: a syntax error was reported in
  /// it, so its missing fields and stray items are not reported again.
  bool HasSyntaxError = false;
};

/// One parsed file.
struct Module {
  std::string FileName;
  unsigned BufferId = 0;
  std::vector<ImportDecl> Imports;
  std::vector<AssertDecl> Asserts;
  std::vector<LetDecl> Lets;
  std::vector<EntityDecl> Entities;
  /// Declaration order across the three lists, for printing:
  /// (0 = import, 1 = assert, 2 = let, 3 = entity, index).
  std::vector<std::pair<int, size_t>> Order;

  bool empty() const { return Order.empty(); }
};

} // namespace mlsc::ast

#endif
