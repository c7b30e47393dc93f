//===- IR.h - The typed intermediate representation -------------*- C++ -*-===//
//
// After name resolution and dimensional analysis a program is a set of
// entities (inheritance flattened), lets and asserts. Every field holds a
// typed expression with resolved references, the range where it was written,
// its `from` source and notes; after constant folding it also holds its value
// in SI base units. A value's origin is therefore: a literal (its range), a
// source record (`from`), or a derivation (its expression over other values).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_IR_H
#define MLSC_IR_IR_H

#include "ir/Dimension.h"
#include "ir/Schema.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlsc::ir {

struct Entity;
struct Let;

enum class TypeKind { Error, Quantity, Bool, String, Date, Entity, Enum, List };

/// The static type of an expression. Lists carry their element type.
struct Type {
  TypeKind Kind = TypeKind::Error;
  Dimension Dim;    ///< Quantity, and lists of quantities
  std::string Name; ///< Entity: kind; Enum: "" (symbols are checked)
  TypeKind Elem = TypeKind::Error; ///< List only

  static Type error() { return {}; }
  static Type quantity(Dimension D) { return {TypeKind::Quantity, D, "", {}}; }
  static Type boolean() { return {TypeKind::Bool, {}, "", {}}; }
  bool isError() const { return Kind == TypeKind::Error; }
  std::string str() const;
};

// ------------------------------------------------------------- expressions

enum class ExprKind {
  Number,
  String,
  Date,
  Bool,
  EnumSymbol,
  EntityRef,
  FieldRef,
  MetricRef,
  LetRef,
  Call,
  Unary,
  Binary,
  List,
  Range,
  Error,
};

enum class Builtin {
  Min,
  Max,
  Ceil,
  Floor,
  Round,
  Abs,
  Sqrt,
  Log,
  Log2,
  Log10,
  Exp
};
const char *builtinName(Builtin B);

/// The IR's own operators: the front end's are mapped by build-ir, so the
/// IR (and everything after it) never sees the AST.
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

/// The source text a range covers (`ttft.p99 < 500 ms`), or "" when the
/// range is invalid. The IR keeps ranges into the source buffers, which
/// outlive it.
inline std::string sourceText(llvm::SMRange R) {
  if (!R.isValid())
    return "";
  return std::string(R.Start.getPointer(), R.End.getPointer());
}

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// One node class with a kind tag keeps the passes' switch statements simple
/// and the copy of inherited fields trivial; only the members of the node's
/// kind are meaningful.
struct Expr {
  ExprKind Kind;
  llvm::SMRange Range;
  Type Ty; ///< set by check-dimensions

  // Number: value in SI base units, as written in source.
  double Number = 0;
  std::string Spelling; ///< Number: "3.35 TB/s"; String/Enum: the text
  std::string NumberText, UnitText; ///< Number: "3.35" and "TB/s"
  int Year = 0, Month = 0, Day = 0; ///< Date
  bool BoolValue = false;

  Entity *Target = nullptr;      ///< EntityRef, FieldRef, MetricRef
  std::vector<std::string> Path; ///< FieldRef / MetricRef path in Target
  Let *LetTarget = nullptr;      ///< LetRef

  Builtin Fn = Builtin::Min; ///< Call
  UnaryOp UOp = UnaryOp::Negate;
  BinaryOp BOp = BinaryOp::Add;
  llvm::SMRange OpRange;
  std::vector<ExprPtr> Operands; ///< Call args, Unary/Binary operands,
                                 ///< List items, Range lo/hi/step

  Expr(ExprKind K, llvm::SMRange R) : Kind(K), Range(R) {}
};

// ------------------------------------------------------------------ values

/// A folded constant.
struct Value {
  TypeKind Kind = TypeKind::Error;
  double Number = 0; ///< Quantity (SI base units); Bool as 0/1
  Dimension Dim;
  std::string Text; ///< String, Enum symbol
  int Year = 0, Month = 0, Day = 0;
  const Entity *Ref = nullptr; ///< Entity
  std::vector<Value> Items;    ///< List
};

// ---------------------------------------------------------------- entities

struct Field {
  std::string Path; ///< "hbm.bandwidth"
  const FieldSchema *Schema = nullptr;
  ExprPtr Value;                   ///< typed IR (null for Constraints fields)
  std::vector<ExprPtr> Conditions; ///< Constraints fields only
  llvm::SMRange Range;             ///< where the assignment was written
  Entity *Source = nullptr;        ///< `from SOURCE`
  std::vector<std::string> Notes;
  const Entity *InheritedFrom = nullptr; ///< set when written in a base
  std::optional<ir::Value> Folded;       ///< set by fold-constants
};

struct Entity {
  std::string Kind;
  const KindSchema *Schema = nullptr;
  std::string Name;
  llvm::SMRange NameRange;
  llvm::SMRange Range;
  Entity *Base = nullptr;
  std::vector<Field> Fields; ///< in schema order
  bool Erroneous = false;    ///< suppress follow-on diagnostics

  Field *field(llvm::StringRef Path);
  const Field *field(llvm::StringRef Path) const;
};

struct Let {
  std::string Name;
  llvm::SMRange NameRange;
  ExprPtr Value;
  Entity *Source = nullptr;
  std::vector<std::string> Notes;
  std::optional<ir::Value> Folded;
};

struct Assert {
  ExprPtr Condition;
  std::string Message;
  llvm::SMRange Range;
  /// Set by fold-constants when the condition uses no metric; asserts that
  /// read metrics are evaluated with their scenario's graph.
  std::optional<ir::Value> Folded;
};

/// The whole compiled program: every module's declarations, imports first.
/// It refers to the source only by ranges (the ASTs stay in the pipeline's
/// Compilation).
struct Program {
  std::vector<std::unique_ptr<Entity>> Entities;
  std::vector<std::unique_ptr<Let>> Lets;
  std::vector<Assert> Asserts; ///< of the main module only
  llvm::StringMap<Entity *> EntityByName;
  llvm::StringMap<Let *> LetByName;
  unsigned MainBufferId = 0;

  Entity *entity(llvm::StringRef Name) const {
    auto It = EntityByName.find(Name);
    return It == EntityByName.end() ? nullptr : It->second;
  }
};

/// `--emit=ir` and `--print-ir-after`: deterministic text.
void printProgram(const Program &P, llvm::SourceMgr &SM, llvm::raw_ostream &OS,
                  bool IncludeImported);
/// Expression in source-like form: `(H100_SXM.hbm.bandwidth * 0.6)`.
std::string exprToString(const Expr &E);
/// `3.35e12 B/s`, `true`, `"text"`, `2026-06-01`, `@H100_SXM`.
std::string valueToString(const Value &V);

} // namespace mlsc::ir

#endif
