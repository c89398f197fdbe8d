//===- Ast.h - syntax tree of the Kiln language -----------------*- C++ -*-===//
#ifndef KILN_DSL_LANG_AST_H
#define KILN_DSL_LANG_AST_H

#include "dsl/Diagnostics.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::lang {

struct Expr;
struct Stmt;
using ExprP = std::unique_ptr<Expr>;
using StmtP = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtP>;

/// One item inside `x[...]`: a point `i`, a range `i +: n`, all `:`, `None`,
/// or a sub-view bound `lo..hi` (then `size` holds `hi`).
struct IndexItem {
  enum Kind { Point, Range, Full, NewAxis, Bounds } kind = Point;
  ExprP start, size;
  SrcPos pos;
};

struct Arg {
  std::string keyword; // empty for positional arguments
  ExprP value;
};

struct Expr {
  enum Kind { Int, Float, Bool, Name, Call, Binary, Unary, Index, Cast, Transpose, IfElse } kind;
  SrcPos pos;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string name;             // Name, Call callee, Binary/Unary operator, Cast dtype
  std::vector<Arg> args;        // Call
  std::vector<ExprP> operands;  // Binary (2), Unary (1), Index/Cast/Transpose (1), IfElse (3)
  std::vector<IndexItem> items; // Index
};

struct Stmt {
  enum Kind { Let, Var, Assign, ExprStmt, For, If, Require, Return } kind;
  SrcPos pos;
  std::string name; // Let / Var / Assign / For variable
  ExprP value;      // Let / Var / Assign / ExprStmt / Require / Return; For: lower bound; If: cond
  ExprP upper;      // For: upper bound
  std::string message;   // Require
  StmtList body, orElse; // For / If
};

struct Dim {
  SrcPos pos;
  int64_t value = 0;
  std::string name; // empty for an integer; `N+1` for a dim one more than N
};

/// A bound of a `range LO..HI` annotation: an integer (may be negative), or
/// the name of a const or a runtime dim.
struct Bound {
  SrcPos pos;
  int64_t value = 0;
  std::string name;
};

struct Param {
  SrcPos pos;
  std::string name;
  std::string access; // in / out / inout for views, empty for scalars
  std::string dtype;
  std::vector<Dim> dims;
  /// `tolerance 2e-2`: the relative error an output may have against the
  /// op's float64 reference (0: the default for its element type).
  double tolerance = 0;
  SrcPos tolerancePos;
  /// `range 0..N`: the integers `kiln run` draws for an input with no file
  /// (lo inclusive, hi exclusive).
  bool hasRange = false;
  Bound rangeLo, rangeHi;
  /// `offsets T`: the input holds the N + 1 offsets of a packed batch of
  /// sequences into T tokens (0 first, T last, never decreasing), as
  /// `cu_seqlens` does; `kiln run` draws them so.
  std::string offsetsOf;
  SrcPos offsetsPos;
  bool isView() const { return !access.empty(); }
};

struct GridAxis {
  SrcPos pos;
  std::string name;
  ExprP extent;
};

struct Const {
  SrcPos pos;
  std::string name, type; // int, bool, float or dtype (an element type: `const S: dtype = f32;`)
  ExprP value;
};

struct SchedParam {
  SrcPos pos;
  std::string name;
  std::string type; // int, or dtype: an element type the schedule picks (`STATE: bf16`)
  ExprP fallback;   // `param X: int = 2;`: the value when the schedule sets none
};

struct Function {
  SrcPos pos;
  std::string name;
  std::vector<std::pair<std::string, SrcPos>> params;
  StmtList body;
};

struct Kernel {
  SrcPos pos;
  std::string name;
  std::vector<Param> params;
  std::vector<GridAxis> grid;
  StmtList body;
};

/// `kernel(arg, ...);` inside an op: each argument names a parameter or a
/// scratch tensor of the op.
struct Launch {
  SrcPos pos;
  std::string kernel;
  std::vector<std::pair<std::string, SrcPos>> args;
};

/// `dim TP = align(T, 4);` in an op: T rounded up to a multiple of 4, a
/// dim for scratch tensors whose rows must start on 16 bytes (TMA strides).
struct AlignedDim {
  SrcPos pos;
  std::string name, of;
  SrcPos ofPos;
  Dim multiple; // an integer or a const / param name, and where it is written
};

/// `op name(params) { scratch x: f32[T, K]; k1(...); k2(...); }`: kernels
/// launched in order on the op's tensors and scratch tensors it allocates.
struct OpDecl {
  SrcPos pos;
  std::string name;
  std::vector<Param> params;
  std::vector<AlignedDim> alignedDims;
  std::vector<Param> scratch; // access "scratch"
  std::vector<Launch> launches;
};

/// `check M = 37, N = 1000;`: runtime dims `kiln check` runs the source's
/// ops at (and `kiln run`'s defaults: the first such line).
struct CheckShape {
  SrcPos pos;
  std::vector<std::pair<std::string, int64_t>> dims;
};

struct Program {
  std::vector<Const> consts;
  std::vector<CheckShape> checks;
  std::vector<SchedParam> schedParams;
  std::vector<Function> functions;
  std::vector<Kernel> kernels;
  std::vector<OpDecl> ops;
  StmtList requires; // top-level compile-time checks
};

} // namespace kiln::lang

#endif
