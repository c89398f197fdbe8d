//===- Emit.cpp - Kiln syntax tree to the tile dialect --------------------===//
//
// Compile-time values (ints, floats, bools from literals, `const` and
// `param`) are folded here; runtime index arithmetic becomes `arith` on
// `index`; everything else becomes tile ops with explicit broadcasts.
// Functions are inlined at each call.
//
//===----------------------------------------------------------------------===//
#include "dsl/SourceDiagnostics.h"
#include "dsl/TileDialect.h"
#include "dsl/lang/Compile.h"
#include "dsl/lang/Parser.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include <cmath>
#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::lang;
namespace tl = kiln::tile;

/// Every element type a tensor, tile or cast may name (and a dtype const
/// or param hold); `bool` is a tile's only.
static const char *const kElementTypeNames[] = {"f32", "bf16", "f16", "f8e4m3",
                                                "f64", "i8",   "i32", "i64"};

/// kElementTypeNames as a message lists them.
static std::string elementTypeList() {
  return llvm::join(std::begin(kElementTypeNames), std::end(kElementTypeNames), ", ");
}

namespace {

/// A value during emission.
struct SVal {
  enum Kind { Invalid, Int, Float, Bool, Index, Cond, Tile, View, Slice, Shape } kind = Invalid;
  int64_t i = 0;
  double f = 0;
  Value v; // Index, Cond, Tile, View
  // Slice of a view:
  SmallVector<Value> starts;
  SmallVector<int64_t> window, keep, shape; // shape: also for Shape lists
  // A sub-view `x[lo..hi]` (View) and slices of it: per dim, where index 0
  // lies in the tensor and the exclusive bound; empty for a whole tensor.
  SmallVector<Value> offsets, limits;
  // Per dim of a slice of a sub-view: the sub-view's start, where the
  // window may begin before it (a start not provably >= 0); else null.
  SmallVector<Value> floors;
  bool masked = false;
  std::string name; // view name

  static SVal ofInt(int64_t x) {
    SVal s;
    s.kind = Int;
    s.i = x;
    return s;
  }
  static SVal ofFloat(double x) {
    SVal s;
    s.kind = Float;
    s.f = x;
    return s;
  }
  static SVal ofBool(bool x) {
    SVal s;
    s.kind = Bool;
    s.i = x;
    return s;
  }
  static SVal of(Kind k, Value v) {
    SVal s;
    s.kind = k;
    s.v = v;
    return s;
  }
  bool ok() const { return kind != Invalid; }
  bool isConst() const { return kind == Int || kind == Float || kind == Bool; }
};

struct Binding {
  SVal value;
  bool isVar = false;
  SrcPos pos;
};
using Scope = std::map<std::string, Binding>;

/// The floors operand of a load or store: none, or one per dim (0 where the
/// window cannot start before the sub-view).
SmallVector<Value> floorsOf(const SVal &s, OpBuilder &b, Location loc) {
  SmallVector<Value> out;
  if (llvm::none_of(s.floors, [](Value v) { return (bool)v; }))
    return out;
  for (unsigned d = 0; d < s.starts.size(); ++d)
    out.push_back(d < s.floors.size() && s.floors[d]
                      ? s.floors[d]
                      : arith::ConstantIndexOp::create(b, loc, 0).getResult());
  return out;
}

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto tt = dyn_cast<tl::TileType>(t)) {
    os << "tile<";
    for (int64_t d : tt.getShape())
      os << d << "x";
    os << tt.getElementType() << ">";
  } else {
    os << t;
  }
  return s;
}

/// Whether a runtime index is >= 0 by construction: constants, dims, grid
/// coordinates, loop variables counting up from such values, and sums,
/// products and quotients of them.
bool provablyNonNegative(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value() >= 0;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto loop = dyn_cast<scf::ForOp>(owner))
      return arg == loop.getInductionVar() && provablyNonNegative(loop.getLowerBound());
    return isa<tl::KernelOp>(owner) && arg.getType().isIndex(); // a runtime dim
  }
  Operation *def = v.getDefiningOp();
  if (isa_and_nonnull<tl::ProgramIdsOp>(def))
    return true;
  if (isa_and_nonnull<arith::AddIOp, arith::MulIOp, arith::DivSIOp, arith::DivUIOp,
                      arith::CeilDivSIOp, arith::MinSIOp, arith::MaxSIOp>(def))
    return llvm::all_of(def->getOperands(), provablyNonNegative);
  return false;
}

/// A comparison of two compile-time numbers.
template <typename T> bool compareConstants(const std::string &op, T x, T y) {
  if (op == "<")
    return x < y;
  if (op == "<=")
    return x <= y;
  if (op == ">")
    return x > y;
  if (op == ">=")
    return x >= y;
  if (op == "==")
    return x == y;
  return x != y;
}

class Emitter {
public:
  Emitter(MLIRContext &ctx, const std::string &path, const std::string &text,
          const CompileOptions &options, raw_ostream &errs)
      : ctx(ctx), b(&ctx), path(path), text(text), options(options), errs(errs) {}

  OwningOpRef<ModuleOp> run(const Program &prog);

private:
  MLIRContext &ctx;
  OpBuilder b;
  const std::string &path, &text;
  const CompileOptions &options;
  raw_ostream &errs;
  const Program *program = nullptr;
  bool failed = false;
  std::map<std::string, SVal> constants;              // const and param values
  std::map<std::string, std::string> constantOrigins; // where an outside value came from
  std::map<std::string, std::string> typeNames;       // dtype consts and params: the type named
  std::vector<std::string> typeParams;                // the dtype params, in declaration order
  const Expr *statementCall = nullptr; // the call an expression statement makes, while it is made
  std::vector<Scope> scopes;
  size_t scopeBase = 0; // functions see only scopes from here on
  std::set<std::string> usedIds;
  std::vector<std::pair<Operation *, std::string>> pendingAliases;
  /// Ops bound by a `let`/`var` inside an inlined function, with the
  /// binding's name: named after the kernel body (emitKernel), and only
  /// where the caller's own binding has not named the op, so a function
  /// never takes an ID the kernel's code would have.
  std::vector<std::pair<Operation *, std::string>> functionIds;
  int inlineDepth = 0;
  std::vector<SVal> *returnSlot = nullptr;
  std::map<std::string, Value> dimValues; // runtime dims of the kernel being emitted

  SVal error(SrcPos pos, const std::string &msg) {
    if (!failed)
      errs << formatDiagnostic(path, text, pos, "error", msg);
    failed = true;
    return {};
  }
  void note(const std::string &msg) { errs << msg; }
  Location loc(SrcPos pos) {
    return FileLineColLoc::get(StringAttr::get(&ctx, path), pos.line, pos.col);
  }

  // --- helpers for types and values ---
  /// f32, or f64 in the float64 reference.
  Type f32Type() { return options.promoteFloats ? b.getF64Type() : b.getF32Type(); }
  Type dtype(const std::string &name) {
    auto named = typeNames.find(name); // a dtype const or param
    if (named != typeNames.end())
      return dtype(named->second);
    if (options.promoteFloats &&
        (name == "f32" || name == "bf16" || name == "f16" || name == "f8e4m3"))
      return b.getF64Type();
    if (name == "f32")
      return b.getF32Type();
    if (name == "bf16")
      return b.getBF16Type();
    if (name == "f16")
      return b.getF16Type();
    if (name == "f8e4m3") // a storage type: loaded, stored and cast, no arithmetic
      return b.getType<Float8E4M3FNType>();
    if (name == "f64")
      return b.getF64Type();
    if (name == "i32")
      return b.getI32Type();
    if (name == "i64")
      return b.getI64Type();
    if (name == "i8")
      return b.getI8Type();
    if (name == "bool")
      return b.getI1Type();
    return {};
  }
  static tl::TileType tileTy(Value v) { return cast<tl::TileType>(v.getType()); }
  Value indexConst(int64_t v, SrcPos pos) { return arith::ConstantIndexOp::create(b, loc(pos), v); }
  Value toIndex(const SVal &v, SrcPos pos, const char *what) {
    if (v.kind == SVal::Int)
      return indexConst(v.i, pos);
    if (v.kind == SVal::Index)
      return v.v;
    if (v.kind == SVal::Tile && tileTy(v.v).getRank() == 0 &&
        isa<IntegerType>(tileTy(v.v).getElementType()) &&
        !tileTy(v.v).getElementType().isInteger(1))
      return tl::ToIndexOp::create(b, loc(pos), b.getIndexType(), v.v);
    error(pos, std::string(what) + " must be an integer, got " + describe(v));
    return {};
  }
  std::string describe(const SVal &v) {
    switch (v.kind) {
    case SVal::Int:
      return "the integer " + std::to_string(v.i);
    case SVal::Float:
      return "a float constant";
    case SVal::Bool:
      return "a bool constant";
    case SVal::Index:
      return "a runtime integer";
    case SVal::Cond:
      return "a runtime condition";
    case SVal::Tile:
      return "a " + typeName(v.v.getType());
    case SVal::View:
      return "the tensor '" + v.name + "'";
    case SVal::Slice:
      return "a slice of '" + v.name + "' (load it first)";
    case SVal::Shape:
      return "a shape list";
    default:
      return "nothing";
    }
  }
  Value make(StringRef opName, Type type, ValueRange operands, SrcPos pos,
             ArrayRef<NamedAttribute> attrs = {}) {
    OperationState st(loc(pos), opName);
    st.addOperands(operands);
    if (type)
      st.addTypes(type);
    st.addAttributes(attrs);
    Operation *op = b.create(st);
    return type ? op->getResult(0) : Value();
  }
  Value constantTile(tl::TileType type, double value, SrcPos pos) {
    Type e = type.getElementType();
    TypedAttr attr = isa<FloatType>(e) ? (TypedAttr)b.getFloatAttr(e, value)
                                       : (TypedAttr)b.getIntegerAttr(e, (int64_t)value);
    return tl::ConstantOp::create(b, loc(pos), type, attr);
  }
  /// Makes a tile of element type `elem` and the given shape from a constant,
  /// an index or a tile (broadcasting the latter).
  Value toTile(const SVal &v, Type elem, ArrayRef<int64_t> shape, SrcPos pos) {
    auto type = tl::TileType::get(&ctx, shape, elem);
    switch (v.kind) {
    case SVal::Int:
      if (elem.isInteger(1))
        return error(pos, "an integer cannot be used as a bool tile"), Value();
      return constantTile(type, (double)v.i, pos);
    case SVal::Float:
      if (!isa<FloatType>(elem))
        return error(pos,
                     "a float constant cannot be combined with an integer tile; cast with 'as'"),
               Value();
      return constantTile(type, v.f, pos);
    case SVal::Bool:
      if (!elem.isInteger(1))
        return error(pos, "a bool cannot be combined with a numeric tile"), Value();
      return constantTile(type, (double)v.i, pos);
    case SVal::Index: {
      if (elem.isInteger(1))
        return error(pos, "a runtime integer cannot be used as a bool tile"), Value();
      Value t = tl::FromIndexOp::create(b, loc(pos), tl::TileType::get(&ctx, {}, elem), v.v);
      return broadcastTo(t, shape, pos);
    }
    case SVal::Tile:
      if (tileTy(v.v).getElementType() != elem)
        return error(pos, "element types differ: " + typeName(v.v.getType()) + " and " +
                              typeName(type) + "; convert one with 'as'"),
               Value();
      return broadcastTo(v.v, shape, pos);
    default:
      return error(pos, "expected a tile or a number, got " + describe(v)), Value();
    }
  }
  Value broadcastTo(Value t, ArrayRef<int64_t> shape, SrcPos pos) {
    auto type = tileTy(t);
    if (type.getShape() == shape)
      return t;
    if (!broadcastable(type.getShape(), shape))
      return error(pos, "cannot broadcast " + typeName(type) + " to shape " + shapeStr(shape)),
             Value();
    return tl::BroadcastOp::create(b, loc(pos), type.withShape(shape), t);
  }
  static std::string shapeStr(ArrayRef<int64_t> shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }
  static bool broadcastable(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
    if (from.size() > to.size())
      return false;
    size_t off = to.size() - from.size();
    for (size_t i = 0; i < from.size(); ++i)
      if (from[i] != 1 && from[i] != to[i + off])
        return false;
    return true;
  }
  /// numpy broadcast of two shapes; false if incompatible.
  static bool commonShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b2, SmallVector<int64_t> &out) {
    size_t n = std::max(a.size(), b2.size());
    out.assign(n, 1);
    for (size_t i = 0; i < n; ++i) {
      int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
      int64_t y = i < n - b2.size() ? 1 : b2[i - (n - b2.size())];
      if (x != y && x != 1 && y != 1)
        return false;
      out[i] = std::max(x, y);
    }
    return true;
  }
  /// Brings tile operands to one element type and shape.
  bool unify(std::vector<SVal> &vals, std::vector<Value> &out, SrcPos pos,
             Type forceElem = Type()) {
    Type elem = forceElem;
    SmallVector<int64_t> shape;
    for (SVal &v : vals) {
      if (v.kind != SVal::Tile)
        continue;
      Type e = tileTy(v.v).getElementType();
      if (!forceElem) {
        if (elem && elem != e) {
          error(pos, "element types differ: " + typeName(elem) + " and " + typeName(e) +
                         "; convert one with 'as'");
          return false;
        }
        elem = e;
      }
      SmallVector<int64_t> next;
      if (!commonShape(shape, tileTy(v.v).getShape(), next)) {
        error(pos, "shapes " + shapeStr(shape) + " and " + shapeStr(tileTy(v.v).getShape()) +
                       " do not broadcast");
        return false;
      }
      shape = next;
    }
    if (!elem) {
      bool anyFloat = false, anyBool = false;
      for (SVal &v : vals)
        anyFloat |= v.kind == SVal::Float, anyBool |= v.kind == SVal::Bool;
      elem = anyBool ? b.getI1Type() : anyFloat ? f32Type() : (Type)b.getI32Type();
    }
    for (SVal &v : vals) {
      Value t = toTile(v, elem, shape, pos);
      if (!t)
        return false;
      out.push_back(t);
    }
    return true;
  }

  void tagId(Value v, const std::string &name) {
    if (!v || !v.getDefiningOp() || !isa<tl::TileDialect>(v.getDefiningOp()->getDialect()))
      return;
    Operation *op = v.getDefiningOp();
    if (returnSlot)
      functionIds.emplace_back(op, name);
    else if (!op->hasAttr(tl::kOpIdAttr))
      setUniqueId(op, name);
    else
      pendingAliases.emplace_back(op, name);
  }
  /// Gives `op`, which has an ID, the further name `name` (a `let` of a
  /// tile already named), unless an ID of the kernel or an earlier alias
  /// has it; once every ID is given, so an alias never renames an op.
  void addAlias(Operation *op, const std::string &name) {
    if (!usedIds.insert(name).second)
      return;
    SmallVector<Attribute> aliases;
    if (auto list = op->getAttrOfType<ArrayAttr>(tl::kOpAliasesAttr))
      aliases.append(list.begin(), list.end());
    aliases.push_back(b.getStringAttr(name));
    op->setAttr(tl::kOpAliasesAttr, b.getArrayAttr(aliases));
  }
  /// Names `op` `name`, or `name.2`, `name.3`... when the kernel has one.
  void setUniqueId(Operation *op, const std::string &name) {
    std::string id = name;
    for (int n = 2; usedIds.count(id); ++n)
      id = name + "." + std::to_string(n);
    usedIds.insert(id);
    op->setAttr(tl::kOpIdAttr, b.getStringAttr(id));
  }

  Binding *lookup(const std::string &name) {
    for (size_t i = scopes.size(); i > scopeBase; --i) {
      auto it = scopes[i - 1].find(name);
      if (it != scopes[i - 1].end())
        return &it->second;
    }
    return nullptr;
  }

  // --- expressions ---
  SVal eval(const Expr &e);
  SVal binary(const std::string &op, SVal a, SVal c, SrcPos pos);
  SVal call(const Expr &e);
  SVal builtin(const Expr &e, bool &handled);
  SVal index(const Expr &e);
  SVal subView(const SVal &base, const Expr &e);
  SVal unaryMath(const std::string &fn, const SVal &x, SrcPos pos);
  int64_t constInt(const Expr &e, const char *what);

  // --- statements ---
  bool emitBlock(const StmtList &block);
  bool emitStmt(const Stmt &s);
  bool emitFor(const Stmt &s);
  bool emitIf(const Stmt &s);
  void collectAssigns(const StmtList &block, std::vector<std::pair<std::string, SrcPos>> &out);

  bool evalConstants(const Program &prog);
  /// Binds a dtype const or param to the element type `value` names.
  bool evalDtype(const std::string &name, const Expr &value);
  bool emitKernel(const Kernel &k, ModuleOp module);
  bool emitOp(const OpDecl &o, ModuleOp module);
  /// Types and attributes of a kernel's or op's arguments: its runtime dims
  /// (collected into `dimNames`), then its parameters.
  bool signature(const std::vector<Param> &params, std::vector<std::string> &dimNames,
                 SmallVector<Type> &argTypes, SmallVector<Attribute> &argAttrs);
  /// A parameter's `tolerance` and `range` as argument attributes, checked.
  bool checkAnnotations(const Param &p, Type type, const std::vector<std::string> &dimNames,
                        SmallVector<NamedAttribute> &attrs);
  Type paramType(const Param &p);
  /// The int and bool consts as compiled, for tools and harnesses.
  DictionaryAttr constsAttr();
  ArrayAttr namesAttr(const std::vector<std::string> &names) {
    return b.getStrArrayAttr(SmallVector<StringRef>(names.begin(), names.end()));
  }
};

int64_t Emitter::constInt(const Expr &e, const char *what) {
  SVal v = eval(e);
  if (!v.ok())
    return 0;
  if (v.kind != SVal::Int)
    return error(e.pos, std::string(what) + " must be a compile-time integer, got " + describe(v)),
           0;
  return v.i;
}

SVal Emitter::eval(const Expr &e) {
  if (failed)
    return {};
  switch (e.kind) {
  case Expr::Int:
    return SVal::ofInt(e.intValue);
  case Expr::Float:
    return SVal::ofFloat(e.floatValue);
  case Expr::Bool:
    return SVal::ofBool(e.intValue);
  case Expr::Name: {
    if (Binding *bnd = lookup(e.name))
      return bnd->value;
    auto it = constants.find(e.name);
    if (it != constants.end())
      return it->second;
    if (dtype(e.name))
      return error(e.pos, "'" + e.name + "' is a type, not a value");
    return error(e.pos, "unknown name '" + e.name + "'");
  }
  case Expr::Binary: {
    SVal a = eval(*e.operands[0]);
    SVal c = eval(*e.operands[1]);
    if (!a.ok() || !c.ok())
      return {};
    return binary(e.name, a, c, e.pos);
  }
  case Expr::Unary: {
    SVal a = eval(*e.operands[0]);
    if (!a.ok())
      return {};
    if (e.name == "-") {
      if (a.kind == SVal::Int)
        return SVal::ofInt(-a.i);
      if (a.kind == SVal::Float)
        return SVal::ofFloat(-a.f);
      if (a.kind == SVal::Index)
        return SVal::of(SVal::Index,
                        arith::SubIOp::create(b, loc(e.pos), indexConst(0, e.pos), a.v));
      if (a.kind == SVal::Tile && !tileTy(a.v).getElementType().isInteger(1))
        return SVal::of(SVal::Tile, tl::NegOp::create(b, loc(e.pos), a.v.getType(), a.v));
      return error(e.pos, "cannot negate " + describe(a));
    }
    if (a.kind == SVal::Bool)
      return SVal::ofBool(!a.i);
    if (a.kind == SVal::Cond)
      return SVal::of(SVal::Cond,
                      arith::XOrIOp::create(b, loc(e.pos), a.v,
                                            arith::ConstantIntOp::create(b, loc(e.pos), 1, 1)));
    if (a.kind == SVal::Tile && tileTy(a.v).getElementType().isInteger(1))
      return SVal::of(SVal::Tile, tl::NotOp::create(b, loc(e.pos), a.v.getType(), a.v));
    return error(e.pos, "'!' needs a bool, got " + describe(a));
  }
  case Expr::Call:
    return call(e);
  case Expr::Index:
    return index(e);
  case Expr::Cast: {
    SVal a = eval(*e.operands[0]);
    if (!a.ok())
      return {};
    Type to = dtype(e.name);
    if (!to)
      return error(e.pos,
                   "unknown element type '" + e.name + "' (" + elementTypeList() + ", bool)");
    if (to.isInteger(1))
      return error(e.pos, "cannot cast to bool; compare instead");
    if (a.kind == SVal::Tile) {
      if (tileTy(a.v).getElementType() == to)
        return a;
      return SVal::of(SVal::Tile,
                      tl::CastOp::create(b, loc(e.pos), tileTy(a.v).withElementType(to), a.v));
    }
    if (a.kind == SVal::Int || a.kind == SVal::Float || a.kind == SVal::Index) {
      if (a.kind == SVal::Float && !isa<FloatType>(to))
        return SVal::ofInt((int64_t)a.f);
      Value t =
          toTile(a.kind == SVal::Int && isa<FloatType>(to) ? SVal::ofFloat(a.i) : a, to, {}, e.pos);
      return t ? SVal::of(SVal::Tile, t) : SVal();
    }
    return error(e.pos, "cannot convert " + describe(a));
  }
  case Expr::Transpose: {
    SVal a = eval(*e.operands[0]);
    if (!a.ok())
      return {};
    if (a.kind != SVal::Tile || tileTy(a.v).getRank() != 2)
      return error(e.pos, ".T needs a 2-D tile, got " + describe(a));
    auto t = tileTy(a.v);
    return SVal::of(SVal::Tile, tl::TransposeOp::create(
                                    b, loc(e.pos), t.withShape({t.getShape()[1], t.getShape()[0]}),
                                    a.v, b.getDenseI64ArrayAttr({1, 0})));
  }
  case Expr::IfElse: {
    SVal c = eval(*e.operands[0]);
    if (!c.ok())
      return {};
    if (c.kind != SVal::Bool)
      return error(e.operands[0]->pos, "an 'if' expression needs a compile-time condition, got " +
                                           describe(c) +
                                           "; use where(cond, a, b) for runtime choices");
    return eval(*e.operands[c.i ? 1 : 2]);
  }
  }
  return {};
}

SVal Emitter::binary(const std::string &op, SVal a, SVal c, SrcPos pos) {
  bool arith = op == "+" || op == "-" || op == "*" || op == "/" || op == "%";
  bool cmp = op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
  bool logic = op == "&&" || op == "||";
  for (const SVal *v : {&a, &c})
    if (v->kind == SVal::View || v->kind == SVal::Slice || v->kind == SVal::Shape)
      return error(pos, "operator '" + op + "' cannot take " + describe(*v));

  // Compile-time folding.
  if (a.isConst() && c.isConst()) {
    if (logic) {
      if (a.kind != SVal::Bool || c.kind != SVal::Bool)
        return error(pos, "'" + op + "' needs bools");
      return SVal::ofBool(op == "&&" ? (a.i && c.i) : (a.i || c.i));
    }
    if (a.kind == SVal::Bool || c.kind == SVal::Bool) {
      if (cmp && (op == "==" || op == "!=") && a.kind == c.kind)
        return SVal::ofBool((a.i == c.i) == (op == "=="));
      return error(pos, "operator '" + op + "' cannot take a bool");
    }
    if (a.kind == SVal::Int && c.kind == SVal::Int) {
      int64_t x = a.i, y = c.i;
      if ((op == "/" || op == "%") && y == 0)
        return error(pos, "division by zero in a compile-time expression");
      if (op == "+")
        return SVal::ofInt(x + y);
      if (op == "-")
        return SVal::ofInt(x - y);
      if (op == "*")
        return SVal::ofInt(x * y);
      if (op == "/")
        return SVal::ofInt(x / y);
      if (op == "%")
        return SVal::ofInt(x % y);
      if (cmp)
        return SVal::ofBool(compareConstants(op, x, y));
    }
    double x = a.kind == SVal::Int ? a.i : a.f, y = c.kind == SVal::Int ? c.i : c.f;
    if (op == "+")
      return SVal::ofFloat(x + y);
    if (op == "-")
      return SVal::ofFloat(x - y);
    if (op == "*")
      return SVal::ofFloat(x * y);
    if (op == "/")
      return SVal::ofFloat(x / y);
    if (op == "%")
      return SVal::ofFloat(std::fmod(x, y));
    if (cmp)
      return SVal::ofBool(compareConstants(op, x, y));
  }

  // Runtime integers: index arithmetic.
  auto isIdx = [](const SVal &v) { return v.kind == SVal::Index || v.kind == SVal::Int; };
  if (isIdx(a) && isIdx(c) && (arith || cmp)) {
    Value x = toIndex(a, pos, "operand"), y = toIndex(c, pos, "operand");
    Location l = loc(pos);
    if (op == "+")
      return SVal::of(SVal::Index, arith::AddIOp::create(b, l, x, y));
    if (op == "-")
      return SVal::of(SVal::Index, arith::SubIOp::create(b, l, x, y));
    if (op == "*")
      return SVal::of(SVal::Index, arith::MulIOp::create(b, l, x, y));
    if (op == "/")
      return SVal::of(SVal::Index, arith::DivSIOp::create(b, l, x, y));
    if (op == "%")
      return SVal::of(SVal::Index, arith::RemSIOp::create(b, l, x, y));
    static const std::map<std::string, arith::CmpIPredicate> preds = {
        {"<", arith::CmpIPredicate::slt}, {"<=", arith::CmpIPredicate::sle},
        {">", arith::CmpIPredicate::sgt}, {">=", arith::CmpIPredicate::sge},
        {"==", arith::CmpIPredicate::eq}, {"!=", arith::CmpIPredicate::ne}};
    return SVal::of(SVal::Cond, arith::CmpIOp::create(b, l, preds.at(op), x, y));
  }
  if (logic && (a.kind == SVal::Cond || c.kind == SVal::Cond)) {
    auto toCond = [&](const SVal &v) -> Value {
      if (v.kind == SVal::Cond)
        return v.v;
      if (v.kind == SVal::Bool)
        return arith::ConstantIntOp::create(b, loc(pos), v.i, 1);
      error(pos, "'" + op + "' cannot combine a runtime condition with " + describe(v));
      return {};
    };
    Value x = toCond(a), y = toCond(c);
    if (!x || !y)
      return {};
    return SVal::of(SVal::Cond, op == "&&" ? (Value)arith::AndIOp::create(b, loc(pos), x, y)
                                           : (Value)arith::OrIOp::create(b, loc(pos), x, y));
  }
  if (a.kind == SVal::Cond || c.kind == SVal::Cond)
    return error(pos, "operator '" + op + "' cannot take a runtime condition");

  // Tiles.
  std::vector<SVal> vals = {a, c};
  std::vector<Value> t;
  if (!unify(vals, t, pos))
    return {};
  Type type = t[0].getType();
  Type elem = tileTy(t[0]).getElementType();
  if (logic) {
    if (!elem.isInteger(1))
      return error(pos, "'" + op + "' needs bool tiles, got " + typeName(type));
    return SVal::of(SVal::Tile, make(op == "&&" ? "tile.and" : "tile.or", type, t, pos));
  }
  if (elem.isInteger(1))
    return error(pos, "operator '" + op + "' cannot take bool tiles");
  if (cmp) {
    static const std::map<std::string, tl::CmpPredicate> preds = {
        {"<", tl::CmpPredicate::lt},  {"<=", tl::CmpPredicate::le}, {">", tl::CmpPredicate::gt},
        {">=", tl::CmpPredicate::ge}, {"==", tl::CmpPredicate::eq}, {"!=", tl::CmpPredicate::ne}};
    return SVal::of(SVal::Tile,
                    tl::CmpOp::create(b, loc(pos), tileTy(t[0]).withElementType(b.getI1Type()),
                                      preds.at(op), t[0], t[1]));
  }
  static const std::map<std::string, const char *> names = {{"+", "tile.add"},
                                                            {"-", "tile.sub"},
                                                            {"*", "tile.mul"},
                                                            {"/", "tile.div"},
                                                            {"%", "tile.rem"}};
  return SVal::of(SVal::Tile, make(names.at(op), type, t, pos));
}

SVal Emitter::index(const Expr &e) {
  SVal base = eval(*e.operands[0]);
  if (!base.ok())
    return {};
  if (base.kind == SVal::View) {
    auto view = cast<tl::ViewType>(base.v.getType());
    if (e.items.size() > view.getRank())
      return error(e.pos, "'" + base.name + "' has " + std::to_string(view.getRank()) +
                              " dims but is indexed with " + std::to_string(e.items.size()));
    if (llvm::any_of(e.items, [](const IndexItem &i) { return i.kind == IndexItem::Bounds; }))
      return subView(base, e);
    bool bounded = !base.limits.empty();
    SVal s;
    s.kind = SVal::Slice;
    s.v = base.v;
    s.name = base.name;
    s.limits = base.limits;
    s.masked = bounded;
    for (unsigned d = 0; d < view.getRank(); ++d) {
      const IndexItem *item = d < e.items.size() ? &e.items[d] : nullptr;
      SrcPos pos = item ? item->pos : e.pos;
      if (item && item->kind == IndexItem::Bounds)
        return error(pos, "'lo..hi' makes a sub-view; it cannot be mixed with points and ranges");
      if (bounded && base.offsets[d] && (!item || item->kind == IndexItem::Full))
        return error(pos, "dim " + std::to_string(d) + " of the sub-view of '" + base.name +
                              "' is bounded at run time; take a fixed-size range 'i +: n'");
      if (!item || item->kind == IndexItem::Full) {
        if (view.isDynamicDim(d))
          return error(pos, "dim " + std::to_string(d) + " of '" + base.name + "' (" +
                                view.getDimNames()[d].getValue().str() +
                                ") is known only at run time; take a fixed-size range 'i +: n'");
        s.starts.push_back(indexConst(0, pos));
        s.window.push_back(view.getShape()[d]);
        s.keep.push_back(d);
        continue;
      }
      if (item->kind == IndexItem::NewAxis)
        return error(pos, "None is for tiles; a view is indexed with points and ranges");
      SVal start = eval(*item->start);
      if (!start.ok())
        return {};
      Value st = toIndex(start, pos, "an index");
      if (!st)
        return {};
      bool mayStartBefore = bounded && base.offsets[d] && !provablyNonNegative(st);
      if (bounded && base.offsets[d])
        st = arith::AddIOp::create(b, loc(pos), base.offsets[d], st);
      s.starts.push_back(st);
      // A compile-time start in a dim of static size must lie inside it:
      // points and ranges there are not masked.
      std::optional<int64_t> known = getConstantIntValue(st);
      if (known && !view.isDynamicDim(d) && (*known < 0 || *known >= view.getShape()[d]))
        return error(item->start->pos, "index " + std::to_string(*known) + " lies outside dim " +
                                           std::to_string(d) + " of '" + base.name + "', of size " +
                                           std::to_string(view.getShape()[d]));
      if (item->kind == IndexItem::Point) {
        s.window.push_back(1);
        continue;
      }
      if (mayStartBefore) {
        s.floors.resize(view.getRank());
        s.floors[d] = base.offsets[d];
      }
      int64_t n = constInt(*item->size, "a range size");
      if (failed)
        return {};
      if (n <= 0)
        return error(item->size->pos, "a range size must be positive, got " + std::to_string(n));
      if (!view.isDynamicDim(d) && n > view.getShape()[d])
        return error(item->size->pos, "range of " + std::to_string(n) + " exceeds dim " +
                                          std::to_string(d) + " of '" + base.name + "' (" +
                                          std::to_string(view.getShape()[d]) + ")");
      if (known && !view.isDynamicDim(d) && *known + n > view.getShape()[d])
        return error(item->pos, "range [" + std::to_string(*known) + ", " +
                                    std::to_string(*known + n) + ") lies outside dim " +
                                    std::to_string(d) + " of '" + base.name + "', of size " +
                                    std::to_string(view.getShape()[d]));
      // Ranges over runtime dims may run past the end: mask them.
      if (view.isDynamicDim(d))
        s.masked = true;
      s.window.push_back(n);
      s.keep.push_back(d);
    }
    for (int64_t k : s.keep)
      s.shape.push_back(s.window[k]);
    return s;
  }
  if (base.kind == SVal::Tile) {
    // ':' keeps a dim, 'a +: n' (compile-time a and n) takes a window of it
    // (a tile.slice), None inserts a unit dim (a reshape after the slice).
    auto t = tileTy(base.v);
    SmallVector<int64_t> shape, offsets, window;
    bool sliced = false;
    unsigned d = 0;
    for (const IndexItem &item : e.items) {
      if (item.kind == IndexItem::NewAxis) {
        shape.push_back(1);
        continue;
      }
      if (item.kind != IndexItem::Full && item.kind != IndexItem::Range)
        return error(item.pos, "tiles are indexed with ':', 'a +: n' and None only; load single "
                               "elements from a tensor");
      if (d >= t.getRank())
        return error(item.pos, "index lists more dims than the " + std::to_string(t.getRank()) +
                                   " of " + typeName(t));
      int64_t start = 0, n = t.getShape()[d];
      if (item.kind == IndexItem::Range) {
        start = constInt(*item.start, "a tile window's start");
        n = constInt(*item.size, "a tile window's size");
        if (failed)
          return {};
        if (start < 0 || n <= 0 || start + n > t.getShape()[d])
          return error(item.pos, "window [" + std::to_string(start) + ", " +
                                     std::to_string(start + n) + ") lies outside dim " +
                                     std::to_string(d) + " of " + typeName(t));
        sliced = true;
      }
      offsets.push_back(start);
      window.push_back(n);
      shape.push_back(n);
      ++d;
    }
    if (d != t.getRank())
      return error(e.pos, "index lists " + std::to_string(d) + " of the " +
                              std::to_string(t.getRank()) + " dims of " + typeName(t));
    Value v = base.v;
    if (sliced)
      v = tl::SliceOp::create(b, loc(e.pos), t.withShape(window), v,
                              b.getDenseI64ArrayAttr(offsets));
    if (shape != window)
      v = tl::ReshapeOp::create(b, loc(e.pos), t.withShape(shape), v);
    return SVal::of(SVal::Tile, v);
  }
  return error(e.pos, "cannot index " + describe(base));
}

SVal Emitter::subView(const SVal &base, const Expr &e) {
  auto view = cast<tl::ViewType>(base.v.getType());
  SVal s = base;
  if (s.limits.empty()) {
    s.offsets.assign(view.getRank(), Value());
    for (unsigned d = 0; d < view.getRank(); ++d)
      s.limits.push_back(view.isDynamicDim(d) ? dimValues.at(view.getDimNames()[d].getValue().str())
                                              : indexConst(view.getShape()[d], e.pos));
  }
  for (unsigned d = 0; d < e.items.size(); ++d) {
    const IndexItem &item = e.items[d];
    if (item.kind == IndexItem::Full)
      continue;
    if (item.kind != IndexItem::Bounds)
      return error(item.pos, "a sub-view is bounded with 'lo..hi' or ':' along every dim");
    SVal lo = eval(*item.start), hi = eval(*item.size);
    if (!lo.ok() || !hi.ok())
      return {};
    Value l = toIndex(lo, item.pos, "a sub-view bound"),
          h = toIndex(hi, item.size->pos, "a sub-view bound");
    if (!l || !h)
      return {};
    // Bounds are relative to the view being narrowed; never wider than it.
    Value off = s.offsets[d];
    Value absLo = off ? arith::AddIOp::create(b, loc(item.pos), off, l).getResult() : l;
    Value absHi = off ? arith::AddIOp::create(b, loc(item.pos), off, h).getResult() : h;
    s.limits[d] = arith::MinSIOp::create(b, loc(item.pos), s.limits[d], absHi);
    s.offsets[d] = absLo;
  }
  return s;
}

SVal Emitter::unaryMath(const std::string &fn, const SVal &x, SrcPos pos) {
  if (x.kind == SVal::Int || x.kind == SVal::Float) {
    double v = x.kind == SVal::Int ? x.i : x.f;
    if (fn == "exp")
      return SVal::ofFloat(std::exp(v));
    if (fn == "log")
      return SVal::ofFloat(std::log(v));
    if (fn == "log1p")
      return SVal::ofFloat(std::log1p(v));
    if (fn == "sqrt")
      return SVal::ofFloat(std::sqrt(v));
    if (fn == "rsqrt")
      return SVal::ofFloat(1.0 / std::sqrt(v));
    if (fn == "abs")
      return x.kind == SVal::Int ? SVal::ofInt(std::llabs(x.i)) : SVal::ofFloat(std::fabs(v));
    if (fn == "sigmoid")
      return SVal::ofFloat(1.0 / (1.0 + std::exp(-v)));
    if (fn == "tanh")
      return SVal::ofFloat(std::tanh(v));
  }
  if (x.kind != SVal::Tile)
    return error(pos, fn + "() needs a tile or a number, got " + describe(x));
  Type type = x.v.getType();
  if (fn != "abs" && !isa<FloatType>(tileTy(x.v).getElementType()))
    return error(pos, fn + "() needs a float tile, got " + typeName(type));
  return SVal::of(SVal::Tile, make("tile." + fn, type, x.v, pos));
}

SVal Emitter::call(const Expr &e) {
  // User functions first: they are inlined with their own scope.
  for (const Function &f : program->functions) {
    if (f.name != e.name)
      continue;
    if (e.args.size() != f.params.size())
      return error(e.pos, "'" + f.name + "' takes " + std::to_string(f.params.size()) +
                              " arguments, got " + std::to_string(e.args.size()));
    if (++inlineDepth > 32)
      return error(e.pos, "functions nest more than 32 deep (recursion is not supported)");
    const bool asStatement = statementCall == &e;
    statementCall = nullptr; // the calls in its body are its own
    Scope scope;
    for (size_t i = 0; i < e.args.size(); ++i) {
      if (!e.args[i].keyword.empty())
        return error(e.args[i].value->pos, "user functions take positional arguments only");
      SVal v = eval(*e.args[i].value);
      if (!v.ok())
        return {};
      scope[f.params[i].first] = {v, false, f.params[i].second};
    }
    size_t savedBase = scopeBase;
    scopeBase = scopes.size();
    scopes.push_back(std::move(scope));
    std::vector<SVal> result;
    std::vector<SVal> *savedSlot = returnSlot;
    returnSlot = &result;
    bool ok = emitBlock(f.body);
    returnSlot = savedSlot;
    scopes.pop_back();
    scopeBase = savedBase;
    --inlineDepth;
    if (!ok)
      return {};
    if (result.empty() && asStatement)
      return SVal::ofInt(0); // nothing to return: its stores were the point
    if (result.empty())
      return error(f.pos, "function '" + f.name + "' ends without 'return'");
    return result.back();
  }
  bool handled = false;
  SVal r = builtin(e, handled);
  if (!handled && !failed)
    return error(e.pos, "unknown function '" + e.name + "'");
  return r;
}

SVal Emitter::builtin(const Expr &e, bool &handled) {
  handled = true;
  const std::string &fn = e.name;
  std::vector<const Expr *> pos;
  std::map<std::string, const Expr *> kw;
  for (const Arg &a : e.args) {
    if (a.keyword.empty()) {
      if (!kw.empty())
        return error(a.value->pos, "positional argument after a keyword argument");
      pos.push_back(a.value.get());
    } else {
      kw[a.keyword] = a.value.get();
    }
  }
  auto arity = [&](size_t lo, size_t hi, std::set<std::string> keywords) -> bool {
    if (pos.size() < lo || pos.size() > hi) {
      error(e.pos,
            fn + "() takes " +
                (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                " positional arguments, got " + std::to_string(pos.size()));
      return false;
    }
    for (auto &[k, v] : kw)
      if (!keywords.count(k)) {
        error(v->pos, fn + "() has no argument '" + k + "'");
        return false;
      }
    return true;
  };
  auto evalTile = [&](const Expr *x, const char *what) -> Value {
    SVal v = eval(*x);
    if (!v.ok())
      return {};
    if (v.kind != SVal::Tile)
      return error(x->pos, fn + "() needs a tile as " + what + ", got " + describe(v)), Value();
    return v.v;
  };
  auto dtypeArg = [&](const Expr *x) -> Type {
    if (x->kind != Expr::Name || !dtype(x->name))
      return error(x->pos, "expected an element type (" + elementTypeList() + ", bool)"), Type();
    return dtype(x->name);
  };
  auto shapeArg = [&](const Expr *x, SmallVector<int64_t> &shape) -> bool {
    if (x->kind != Expr::Call || x->name != "[]")
      return error(x->pos, "expected a shape list like [BV, K]"), false;
    for (const Arg &a : x->args) {
      int64_t d = constInt(*a.value, "a shape dim");
      if (failed)
        return false;
      if (d <= 0)
        return error(a.value->pos, "shape dims must be positive, got " + std::to_string(d)), false;
      shape.push_back(d);
    }
    return true;
  };
  auto axisArg = [&](int64_t rank, int64_t dflt, int64_t &axis) -> bool {
    axis = dflt;
    if (kw.count("axis")) {
      axis = constInt(*kw["axis"], "axis");
      if (failed)
        return false;
      if (axis < 0)
        axis += rank;
      if (axis < 0 || axis >= rank)
        return error(kw["axis"]->pos,
                     "axis out of range for a rank-" + std::to_string(rank) + " tile"),
               false;
    }
    return true;
  };

  if (fn == "[]")
    return error(e.pos, "a shape list is only an argument of zeros, full, reshape or broadcast");
  if (fn == "load") {
    if (!arity(1, 1, {"other"}))
      return {};
    SVal s = eval(*pos[0]);
    if (!s.ok())
      return {};
    if (s.kind != SVal::Slice)
      return error(pos[0]->pos, "load() needs a tensor slice like x[i, :], got " + describe(s));
    auto view = cast<tl::ViewType>(s.v.getType());
    auto type = tl::TileType::get(&ctx, s.shape, view.getElementType());
    bool masked = s.masked || kw.count("other");
    FloatAttr other;
    if (kw.count("other")) {
      SVal o = eval(*kw["other"]);
      if (!o.ok())
        return {};
      if (o.kind != SVal::Int && o.kind != SVal::Float)
        return error(kw["other"]->pos, "other= must be a number");
      other = b.getF64FloatAttr(o.kind == SVal::Int ? o.i : o.f);
    }
    auto op = tl::LoadOp::create(b, loc(e.pos), type, s.v, s.starts, floorsOf(s, b, loc(e.pos)),
                                 s.limits, b.getDenseI64ArrayAttr(s.window),
                                 b.getDenseI64ArrayAttr(s.keep), masked, other);
    return SVal::of(SVal::Tile, op.getResult());
  }
  if (fn == "store") {
    if (!arity(2, 2, {}))
      return {};
    SVal s = eval(*pos[0]);
    if (!s.ok())
      return {};
    if (s.kind != SVal::Slice)
      return error(pos[0]->pos,
                   "store() needs a tensor slice like x[i, :] first, got " + describe(s));
    SVal v = eval(*pos[1]);
    if (!v.ok())
      return {};
    auto view = cast<tl::ViewType>(s.v.getType());
    if (v.kind == SVal::Tile && tileTy(v.v).getElementType() != view.getElementType())
      return error(pos[1]->pos, "storing " + typeName(v.v.getType()) + " into '" + s.name +
                                    "' of " + typeName(view.getElementType()) +
                                    "; convert with 'as " + typeName(view.getElementType()) + "'");
    if (v.kind == SVal::Tile && !broadcastable(tileTy(v.v).getShape(), s.shape))
      return error(pos[1]->pos, "storing " + typeName(v.v.getType()) + " into a slice of shape " +
                                    shapeStr(s.shape));
    Value t = toTile(v, view.getElementType(), s.shape, pos[1]->pos);
    if (!t)
      return {};
    auto op = tl::StoreOp::create(b, loc(e.pos), t, s.v, s.starts, floorsOf(s, b, loc(e.pos)),
                                  s.limits, b.getDenseI64ArrayAttr(s.window),
                                  b.getDenseI64ArrayAttr(s.keep), s.masked);
    setUniqueId(op, "store." + s.name);
    SVal none;
    none.kind = SVal::Shape; // a statement value: nothing to use
    return none;
  }
  if (fn == "signal" || fn == "wait") {
    if (!arity(2, 2, {}))
      return {};
    SVal s = eval(*pos[0]);
    if (!s.ok())
      return {};
    if (s.kind != SVal::Slice || llvm::any_of(s.window, [](int64_t w) { return w != 1; }) ||
        !s.keep.empty())
      return error(pos[0]->pos,
                   fn + "() needs one element of an i32 tensor like ready[c, hv] first, got " +
                       describe(s));
    auto view = cast<tl::ViewType>(s.v.getType());
    if (!view.getElementType().isInteger(32))
      return error(pos[0]->pos, fn + "() needs an i32 tensor for its flags; '" + s.name +
                                    "' holds " + typeName(view.getElementType()));
    SVal v = eval(*pos[1]);
    if (!v.ok())
      return {};
    if (v.kind == SVal::Tile && tileTy(v.v).getRank() != 0)
      return error(pos[1]->pos, fn + "() sets or awaits one value, got " + typeName(v.v.getType()));
    Value t = toTile(v, b.getI32Type(), {}, pos[1]->pos);
    if (!t)
      return {};
    Operation *op;
    if (fn == "signal")
      op = tl::SignalOp::create(b, loc(e.pos), t, s.v, s.starts);
    else
      op = tl::WaitOp::create(b, loc(e.pos), t, s.v, s.starts);
    setUniqueId(op, fn + "." + s.name);
    SVal none;
    none.kind = SVal::Shape; // a statement value: nothing to use
    return none;
  }
  if (fn == "zeros" || fn == "full") {
    bool full = fn == "full";
    if (!arity(full ? 3 : 2, full ? 3 : 2, {}))
      return {};
    SmallVector<int64_t> shape;
    if (!shapeArg(pos[0], shape))
      return {};
    Type elem = dtypeArg(pos[full ? 2 : 1]);
    if (!elem)
      return {};
    SVal value = SVal::ofInt(0);
    if (full && !(value = eval(*pos[1])).ok())
      return {};
    if (full && !value.isConst())
      return error(pos[1]->pos, "full() needs a constant value");
    if (value.kind == SVal::Int && isa<FloatType>(elem))
      value = SVal::ofFloat(value.i);
    Value t = toTile(value, elem, shape, e.pos);
    return t ? SVal::of(SVal::Tile, t) : SVal();
  }
  if (fn == "iota") {
    if (!arity(1, 1, {}))
      return {};
    int64_t n = constInt(*pos[0], "iota's length");
    if (failed)
      return {};
    if (n <= 0)
      return error(pos[0]->pos, "iota's length must be positive");
    return SVal::of(SVal::Tile, tl::IotaOp::create(b, loc(e.pos),
                                                   tl::TileType::get(&ctx, {n}, b.getI32Type())));
  }
  if (fn == "sum" || fn == "max" || fn == "min") {
    if (pos.size() == 2 && fn != "sum")
      return error(e.pos, fn + "(x) reduces one tile; for the elementwise " + fn + " of two use " +
                              (fn == "max" ? "maximum" : "minimum") + "(a, b)");
    if (!arity(1, 1, {"axis"}))
      return {};
    Value x = evalTile(pos[0], "its argument");
    if (!x)
      return {};
    if (tileTy(x).getElementType().isInteger(1))
      return error(pos[0]->pos, fn + "() cannot reduce bool tiles; convert with 'as i32'");
    auto kind = fn == "sum"   ? tl::ReduceKind::sum
                : fn == "max" ? tl::ReduceKind::max
                              : tl::ReduceKind::min;
    auto reduce = [&](Value v, int64_t axis) -> Value {
      SmallVector<int64_t> shape(tileTy(v).getShape());
      shape.erase(shape.begin() + axis);
      return tl::ReduceOp::create(b, loc(e.pos), tileTy(v).withShape(shape), kind, v,
                                  (uint64_t)axis);
    };
    if (!kw.count("axis")) {
      while (tileTy(x).getRank() > 0)
        x = reduce(x, tileTy(x).getRank() - 1);
      return SVal::of(SVal::Tile, x);
    }
    int64_t axis;
    if (!axisArg(tileTy(x).getRank(), 0, axis))
      return {};
    return SVal::of(SVal::Tile, reduce(x, axis));
  }
  if (fn == "cumsum") {
    if (!arity(1, 1, {"axis"}))
      return {};
    Value x = evalTile(pos[0], "its argument");
    if (!x)
      return {};
    if (tileTy(x).getRank() == 0)
      return error(pos[0]->pos, "cumsum() needs a tile of rank 1 or more");
    int64_t axis;
    if (!axisArg(tileTy(x).getRank(), tileTy(x).getRank() - 1, axis))
      return {};
    return SVal::of(SVal::Tile,
                    tl::CumsumOp::create(b, loc(e.pos), x.getType(), x, (uint64_t)axis));
  }
  if (fn == "dot") {
    if (!arity(2, 3, {}))
      return {};
    Value x = evalTile(pos[0], "its first argument");
    Value y = x ? evalTile(pos[1], "its second argument") : Value();
    Value acc = pos.size() == 3 && y ? evalTile(pos[2], "its accumulator") : Value();
    if (!x || !y || (pos.size() == 3 && !acc))
      return {};
    auto tx = tileTy(x), ty = tileTy(y);
    if (tx.getRank() != 2 || ty.getRank() != 2)
      return error(e.pos,
                   "dot() multiplies 2-D tiles, got " + typeName(tx) + " and " + typeName(ty));
    if (tx.getShape()[1] != ty.getShape()[0])
      return error(e.pos, "dot() of " + typeName(tx) + " and " + typeName(ty) +
                              ": inner dims differ (" + std::to_string(tx.getShape()[1]) + " vs " +
                              std::to_string(ty.getShape()[0]) + ")");
    if (!isa<FloatType>(tx.getElementType()) || !isa<FloatType>(ty.getElementType()))
      return error(e.pos, "dot() needs float tiles");
    auto rt = tl::TileType::get(&ctx, {tx.getShape()[0], ty.getShape()[1]}, f32Type());
    if (acc && acc.getType() != rt)
      return error(pos[2]->pos, "dot() accumulator must be " + typeName(rt) + ", got " +
                                    typeName(acc.getType()));
    return SVal::of(SVal::Tile, tl::DotOp::create(b, loc(e.pos), rt, x, y, acc));
  }
  if (fn == "exp" || fn == "log" || fn == "log1p" || fn == "sqrt" || fn == "rsqrt" || fn == "abs" ||
      fn == "sigmoid" || fn == "tanh") {
    if (!arity(1, 1, {}))
      return {};
    SVal x = eval(*pos[0]);
    if (!x.ok())
      return {};
    return unaryMath(fn, x, e.pos);
  }
  if (fn == "maximum" || fn == "minimum") {
    if (!arity(2, 2, {}))
      return {};
    std::vector<SVal> vals = {eval(*pos[0]), eval(*pos[1])};
    if (failed)
      return {};
    if (vals[0].isConst() && vals[1].isConst() && vals[0].kind != SVal::Bool &&
        vals[1].kind != SVal::Bool) {
      if (vals[0].kind == SVal::Int && vals[1].kind == SVal::Int)
        return SVal::ofInt(fn == "maximum" ? std::max(vals[0].i, vals[1].i)
                                           : std::min(vals[0].i, vals[1].i));
      double x = vals[0].kind == SVal::Int ? vals[0].i : vals[0].f,
             y = vals[1].kind == SVal::Int ? vals[1].i : vals[1].f;
      return SVal::ofFloat(fn == "maximum" ? std::max(x, y) : std::min(x, y));
    }
    if ((vals[0].kind == SVal::Index || vals[0].kind == SVal::Int) &&
        (vals[1].kind == SVal::Index || vals[1].kind == SVal::Int)) {
      Value x = toIndex(vals[0], e.pos, "operand"), y = toIndex(vals[1], e.pos, "operand");
      return SVal::of(SVal::Index, fn == "maximum"
                                       ? (Value)arith::MaxSIOp::create(b, loc(e.pos), x, y)
                                       : (Value)arith::MinSIOp::create(b, loc(e.pos), x, y));
    }
    std::vector<Value> t;
    if (!unify(vals, t, e.pos))
      return {};
    return SVal::of(SVal::Tile,
                    make(fn == "maximum" ? "tile.max" : "tile.min", t[0].getType(), t, e.pos));
  }
  if (fn == "where") {
    if (!arity(3, 3, {}))
      return {};
    SVal c = eval(*pos[0]);
    std::vector<SVal> vals = {eval(*pos[1]), eval(*pos[2])};
    if (failed)
      return {};
    if (c.kind == SVal::Bool)
      return vals[c.i ? 0 : 1];
    if (c.kind == SVal::Cond) // a runtime scalar condition selects whole tiles
      c = SVal::of(SVal::Tile,
                   tl::SplatOp::create(b, loc(pos[0]->pos),
                                       tl::TileType::get(&ctx, {}, b.getI1Type()), c.v));
    if (c.kind != SVal::Tile || !tileTy(c.v).getElementType().isInteger(1))
      return error(pos[0]->pos, "where() needs a bool tile condition, got " + describe(c));
    std::vector<Value> t;
    if (!unify(vals, t, e.pos))
      return {};
    SmallVector<int64_t> shape;
    if (!commonShape(tileTy(c.v).getShape(), tileTy(t[0]).getShape(), shape))
      return error(e.pos, "where(): condition and values do not broadcast");
    Value cond = broadcastTo(c.v, shape, e.pos);
    Value x = broadcastTo(t[0], shape, e.pos), y = broadcastTo(t[1], shape, e.pos);
    if (!cond || !x || !y)
      return {};
    return SVal::of(SVal::Tile, tl::SelectOp::create(b, loc(e.pos), x.getType(), cond, x, y));
  }
  if (fn == "trans") {
    if (!arity(1, 1, {}))
      return {};
    Value x = evalTile(pos[0], "its argument");
    if (!x)
      return {};
    auto tt = tileTy(x);
    if (tt.getRank() != 2)
      return error(e.pos, "trans() needs a 2-D tile, got " + typeName(tt));
    return SVal::of(SVal::Tile,
                    tl::TransposeOp::create(b, loc(e.pos),
                                            tt.withShape({tt.getShape()[1], tt.getShape()[0]}), x,
                                            b.getDenseI64ArrayAttr({1, 0})));
  }
  if (fn == "reshape" || fn == "broadcast") {
    if (!arity(2, 2, {}))
      return {};
    Value x = evalTile(pos[0], "its first argument");
    SmallVector<int64_t> shape;
    if (!x || !shapeArg(pos[1], shape))
      return {};
    if (fn == "broadcast") {
      Value r = broadcastTo(x, shape, e.pos);
      return r ? SVal::of(SVal::Tile, r) : SVal();
    }
    auto tt = tileTy(x);
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (n != tt.getNumElements())
      return error(e.pos, "reshape() of " + typeName(tt) + " to " + shapeStr(shape) +
                              " changes the element count");
    return SVal::of(SVal::Tile, tl::ReshapeOp::create(b, loc(e.pos), tt.withShape(shape), x));
  }
  if (fn == "cdiv") {
    if (!arity(2, 2, {}))
      return {};
    SVal x = eval(*pos[0]), y = eval(*pos[1]);
    if (failed)
      return {};
    SVal sum = binary("+", x, binary("-", y, SVal::ofInt(1), e.pos), e.pos);
    return sum.ok() ? binary("/", sum, y, e.pos) : SVal();
  }
  if (fn == "clog2") {
    // Compile-time only: sizes loops over the bits of a tile extent.
    if (!arity(1, 1, {}))
      return {};
    int64_t x = constInt(*pos[0], "clog2()'s argument");
    if (failed)
      return {};
    if (x < 1)
      return error(e.pos, "clog2() needs a positive integer, got " + std::to_string(x));
    int64_t bits = 0;
    while ((int64_t(1) << bits) < x)
      ++bits;
    return SVal::ofInt(bits);
  }
  handled = false;
  return {};
}

void Emitter::collectAssigns(const StmtList &block,
                             std::vector<std::pair<std::string, SrcPos>> &out) {
  for (const StmtP &s : block) {
    if (s->kind == Stmt::Assign)
      out.push_back({s->name, s->pos});
    collectAssigns(s->body, out);
    collectAssigns(s->orElse, out);
  }
}

bool Emitter::emitBlock(const StmtList &block) {
  scopes.emplace_back();
  bool ok = true;
  for (const StmtP &s : block)
    if (!(ok = emitStmt(*s)))
      break;
  scopes.pop_back();
  return ok && !failed;
}

bool Emitter::emitStmt(const Stmt &s) {
  if (failed)
    return false;
  if (returnSlot && !returnSlot->empty())
    return error(s.pos, "code after 'return' never runs"), false;
  switch (s.kind) {
  case Stmt::Let:
  case Stmt::Var: {
    SVal v = eval(*s.value);
    if (!v.ok())
      return false;
    if (v.kind == SVal::Slice)
      return error(s.value->pos, "a tensor slice must be loaded: load(" + v.name + "[...])"), false;
    if (v.kind == SVal::Shape)
      return error(s.value->pos, "this expression has no value"), false;
    if (v.kind == SVal::Tile)
      tagId(v.v, s.name);
    scopes.back()[s.name] = {v, s.kind == Stmt::Var, s.pos};
    return true;
  }
  case Stmt::Assign: {
    Binding *bnd = lookup(s.name);
    if (!bnd)
      return error(s.pos, "assignment to undeclared '" + s.name + "'; declare it with 'var'"),
             false;
    if (!bnd->isVar)
      return error(s.pos, "'" + s.name + "' is declared with 'let' (line " +
                              std::to_string(bnd->pos.line) + "); use 'var' to reassign it"),
             false;
    SVal v = eval(*s.value);
    if (!v.ok())
      return false;
    const SVal &old = bnd->value;
    if (old.kind == SVal::Tile) {
      if (v.kind != SVal::Tile || v.v.getType() != old.v.getType()) {
        if (v.kind != SVal::Tile && v.isConst()) {
          Value t =
              toTile(v, tileTy(old.v).getElementType(), tileTy(old.v).getShape(), s.value->pos);
          if (!t)
            return false;
          v = SVal::of(SVal::Tile, t);
        } else {
          return error(s.value->pos, "'" + s.name + "' holds " + describe(old) +
                                         "; cannot assign " + describe(v)),
                 false;
        }
      }
    } else if ((old.kind == SVal::Index || old.kind == SVal::Int) &&
               !(v.kind == SVal::Index || v.kind == SVal::Int)) {
      return error(s.value->pos, "'" + s.name + "' holds an integer; cannot assign " + describe(v)),
             false;
    }
    if (v.kind == SVal::Tile)
      tagId(v.v, s.name);
    bnd->value = v;
    return true;
  }
  case Stmt::ExprStmt: {
    // A call written as a statement may be to a function that returns
    // nothing (one that only stores).
    statementCall = s.value->kind == Expr::Call ? s.value.get() : nullptr;
    SVal v = eval(*s.value);
    statementCall = nullptr;
    return v.ok();
  }
  case Stmt::Require: {
    SVal v = eval(*s.value);
    if (!v.ok())
      return false;
    if (v.kind != SVal::Bool)
      return error(s.value->pos, "require needs a compile-time condition, got " + describe(v)),
             false;
    if (!v.i) {
      error(s.pos, s.message.empty() ? "requirement failed" : "requirement failed: " + s.message);
      // Point at where the values of the condition came from.
      std::vector<std::string> names;
      std::function<void(const Expr &)> walk = [&](const Expr &x) {
        if (x.kind == Expr::Name && constantOrigins.count(x.name))
          names.push_back(x.name);
        for (const ExprP &o : x.operands)
          walk(*o);
        for (const Arg &a : x.args)
          walk(*a.value);
      };
      walk(*s.value);
      for (const std::string &n : names) {
        const SVal &c = constants[n];
        errs << constantOrigins[n] << ": note: " << n << " = "
             << (c.kind == SVal::Float ? std::to_string(c.f) : std::to_string(c.i))
             << " is set here\n";
      }
      return false;
    }
    return true;
  }
  case Stmt::Return: {
    if (!returnSlot)
      return error(s.pos, "'return' is only for functions; kernels end at their closing brace"),
             false;
    SVal v = eval(*s.value);
    if (!v.ok())
      return false;
    returnSlot->push_back(v);
    return true;
  }
  case Stmt::For:
    return emitFor(s);
  case Stmt::If:
    return emitIf(s);
  }
  return false;
}

bool Emitter::emitFor(const Stmt &s) {
  SVal lo = eval(*s.value), hi = lo.ok() ? eval(*s.upper) : SVal();
  if (!lo.ok() || !hi.ok())
    return false;
  Value lb = toIndex(lo, s.value->pos, "a loop bound");
  Value ub = lb ? toIndex(hi, s.upper->pos, "a loop bound") : Value();
  if (!lb || !ub)
    return false;
  // Variables of enclosing scopes assigned in the body are carried by the loop.
  std::vector<std::pair<std::string, SrcPos>> assigns;
  collectAssigns(s.body, assigns);
  std::vector<Binding *> carried;
  std::vector<std::string> carriedNames;
  for (auto &[name, pos] : assigns) {
    Binding *bnd = lookup(name);
    if (!bnd || llvm::is_contained(carried, bnd))
      continue; // declared inside the body, or already carried
    if (bnd->value.kind == SVal::Int)
      bnd->value = SVal::of(SVal::Index, indexConst(bnd->value.i, bnd->pos));
    else if (bnd->value.kind == SVal::Float) {
      Value t = toTile(bnd->value, f32Type(), {}, bnd->pos);
      bnd->value = SVal::of(SVal::Tile, t);
    } else if (bnd->value.kind != SVal::Tile && bnd->value.kind != SVal::Index) {
      return error(pos, "a loop cannot carry '" + name + "', which holds " + describe(bnd->value)),
             false;
    }
    carried.push_back(bnd);
    carriedNames.push_back(name);
  }
  SmallVector<Value> inits;
  for (Binding *bnd : carried)
    inits.push_back(bnd->value.v);
  auto loop = scf::ForOp::create(b, loc(s.pos), lb, ub, indexConst(1, s.pos), inits);
  OpBuilder::InsertionGuard guard(b);
  Block *body = loop.getBody();
  if (inits.empty())
    b.setInsertionPoint(body->getTerminator());
  else
    b.setInsertionPointToEnd(body);
  for (auto [i, bnd] : llvm::enumerate(carried))
    bnd->value.v = loop.getRegionIterArgs()[i];
  scopes.emplace_back();
  scopes.back()[s.name] = {SVal::of(SVal::Index, loop.getInductionVar()), false, s.pos};
  bool ok = emitBlock(s.body);
  scopes.pop_back();
  if (!ok)
    return false;
  SmallVector<Value> yields;
  for (auto [i, bnd] : llvm::enumerate(carried)) {
    Value v = bnd->value.kind == SVal::Int ? indexConst(bnd->value.i, s.pos) : bnd->value.v;
    if (v.getType() != inits[i].getType())
      return error(s.pos, "the loop changes the type of '" + carriedNames[i] + "' from " +
                              typeName(inits[i].getType()) + " to " + typeName(v.getType())),
             false;
    yields.push_back(v);
  }
  if (!inits.empty())
    scf::YieldOp::create(b, loc(s.pos), yields);
  for (auto [i, bnd] : llvm::enumerate(carried))
    bnd->value.v = loop.getResult(i);
  return true;
}

bool Emitter::emitIf(const Stmt &s) {
  SVal c = eval(*s.value);
  if (!c.ok())
    return false;
  if (c.kind == SVal::Bool) {
    if (c.i)
      return emitBlock(s.body);
    return emitBlock(s.orElse);
  }
  Value cond;
  if (c.kind == SVal::Cond)
    cond = c.v;
  else if (c.kind == SVal::Tile && tileTy(c.v).getRank() == 0 &&
           tileTy(c.v).getElementType().isInteger(1))
    cond = arith::CmpIOp::create(b, loc(s.pos), arith::CmpIPredicate::ne,
                                 tl::ToIndexOp::create(b, loc(s.pos), b.getIndexType(), c.v),
                                 indexConst(0, s.pos));
  else
    return error(s.value->pos, "an 'if' needs a condition, got " + describe(c)), false;
  std::vector<std::pair<std::string, SrcPos>> assigns;
  collectAssigns(s.body, assigns);
  collectAssigns(s.orElse, assigns);
  for (auto &[name, pos] : assigns) {
    // Names declared inside the branches are fine; outer ones would need results.
    bool declaredInside = false;
    std::function<void(const StmtList &)> scan = [&](const StmtList &blk) {
      for (const StmtP &st : blk) {
        if ((st->kind == Stmt::Var || st->kind == Stmt::Let) && st->name == name)
          declaredInside = true;
        scan(st->body);
        scan(st->orElse);
      }
    };
    scan(s.body);
    scan(s.orElse);
    if (!declaredInside && lookup(name))
      return error(pos, "cannot assign to '" + name +
                            "' inside an 'if' on a runtime condition; "
                            "compute both values and choose with where(...)"),
             false;
  }
  auto ifOp = scf::IfOp::create(b, loc(s.pos), TypeRange{}, cond, !s.orElse.empty());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  if (!emitBlock(s.body))
    return false;
  if (!s.orElse.empty()) {
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    if (!emitBlock(s.orElse))
      return false;
  }
  return true;
}

/// What a dtype const or param may name: a tensor's element type.
static bool isElementTypeName(llvm::StringRef name) {
  return llvm::is_contained(kElementTypeNames, name);
}

/// The message for a dtype const or param given something else.
static std::string notAnElementType(const std::string &name) {
  return "'" + name + "' is an element type; give one of " + elementTypeList();
}

/// The element type an outside value names (`-D STATE=bf16`, a schedule's
/// `STATE: bf16`), or an error at its origin.
static bool externalDtype(const ExternalValue &v, const std::string &name, std::string &out,
                          llvm::raw_ostream &errs) {
  if (isElementTypeName(v.symbol)) {
    out = v.symbol;
    return true;
  }
  errs << v.origin << ": error: " << notAnElementType(name) << "\n";
  return false;
}

bool Emitter::evalDtype(const std::string &name, const Expr &value) {
  if (value.kind != Expr::Name || !(isElementTypeName(value.name) || typeNames.count(value.name)))
    return error(value.pos, notAnElementType(name)), false;
  typeNames[name] = typeNames.count(value.name) ? typeNames[value.name] : value.name;
  return true;
}

bool Emitter::evalConstants(const Program &prog) {
  std::set<std::string> declared;
  for (const Const &c : prog.consts) {
    if (declared.count(c.name))
      return error(c.pos, "'" + c.name + "' is declared twice"), false;
    declared.insert(c.name);
    auto over = options.constants.find(c.name);
    if (c.type == "dtype") {
      if (over == options.constants.end()) {
        if (!evalDtype(c.name, *c.value))
          return false;
      } else if (!externalDtype(over->second, c.name, typeNames[c.name], errs)) {
        return failed = true, false;
      } else {
        constantOrigins[c.name] = over->second.origin;
      }
      continue;
    }
    SVal v;
    if (over != options.constants.end()) {
      // A bool takes true or false as the source writes them, or 0 or 1.
      const std::string &word = over->second.symbol;
      bool boolWord = c.type == "bool" && (word == "true" || word == "false");
      if (!word.empty() && !boolWord) {
        errs << over->second.origin << ": error: '" << c.name << "' is "
             << (c.type == "bool" ? "a bool; give true, false, 0 or 1"
                                  : c.type + ", not an element type")
             << "\n";
        failed = true;
        return false;
      }
      if (boolWord) {
        v = SVal::ofBool(word == "true");
      } else if (c.type == "bool") {
        if (over->second.value != 0 && over->second.value != 1) {
          errs << over->second.origin << ": error: '" << c.name
               << "' is a bool; give true, false, 0 or 1\n";
          failed = true;
          return false;
        }
        v = SVal::ofBool(over->second.value);
      } else if (c.type == "float") {
        v = SVal::ofFloat(over->second.value);
      } else {
        v = SVal::ofInt(over->second.value);
      }
      constantOrigins[c.name] = over->second.origin;
    } else {
      v = eval(*c.value);
      if (!v.ok())
        return false;
      bool fits = (c.type == "int" && v.kind == SVal::Int) ||
                  (c.type == "bool" && v.kind == SVal::Bool) ||
                  (c.type == "float" && (v.kind == SVal::Float || v.kind == SVal::Int));
      if (!fits)
        return error(c.value->pos,
                     "'" + c.name + "' is declared " + c.type + " but its value is " + describe(v)),
               false;
      if (c.type == "float" && v.kind == SVal::Int)
        v = SVal::ofFloat(v.i);
    }
    constants[c.name] = v;
  }
  // -D also sets a dtype param with a default that the schedule leaves
  // unset (`-D STATE=bf16` with any schedule of an op whose state type is a
  // param). Integer params stay the schedule's: its params attribute and the
  // manifest record them.
  std::set<std::string> defaulted;
  for (const SchedParam &p : prog.schedParams)
    if (p.fallback && p.type == "dtype")
      defaulted.insert(p.name);
  for (auto &[name, value] : options.constants)
    if (!declared.count(name) && !defaulted.count(name)) {
      errs << value.origin << ": error: the source declares no constant '" << name << "'\n";
      failed = true;
      return false;
    }
  std::set<std::string> params;
  for (const SchedParam &p : prog.schedParams) {
    if (declared.count(p.name) || params.count(p.name))
      return error(p.pos, "'" + p.name + "' is declared twice"), false;
    params.insert(p.name);
    // The value from outside: the schedule's, or -D's where it sets none.
    const ExternalValue *set = nullptr;
    auto it = options.scheduleParams.find(p.name);
    if (it != options.scheduleParams.end())
      set = &it->second;
    auto given = options.constants.find(p.name);
    if (given != options.constants.end() && defaulted.count(p.name)) {
      if (set) {
        errs << given->second.origin << ": error: '" << p.name << "' is set by the schedule ("
             << set->origin << "); -D sets only consts and params a schedule leaves out\n";
        failed = true;
        return false;
      }
      set = &given->second;
    }
    if (p.type == "dtype") {
      if (set) {
        if (!externalDtype(*set, p.name, typeNames[p.name], errs))
          return failed = true, false;
        constantOrigins[p.name] = set->origin;
        typeParams.push_back(p.name);
        continue;
      }
      if (!p.fallback)
        return error(p.pos, "schedule parameter '" + p.name +
                                "' is not set by the schedule (add it under params:)"),
               false;
      if (!evalDtype(p.name, *p.fallback))
        return false;
      typeParams.push_back(p.name);
      continue;
    }
    if (!set && p.fallback) {
      SVal value = eval(*p.fallback);
      if (!value.ok())
        return false;
      if (value.kind != SVal::Int)
        return error(p.fallback->pos,
                     "the default of schedule parameter '" + p.name + "' is not an integer"),
               false;
      constants[p.name] = value;
      continue;
    }
    if (!set)
      return error(p.pos, "schedule parameter '" + p.name +
                              "' is not set by the schedule (add it under params:)"),
             false;
    SVal value = SVal::ofInt(set->value);
    if (!set->symbol.empty()) {
      auto c = constants.find(set->symbol);
      if (c == constants.end() || c->second.kind != SVal::Int) {
        errs << set->origin << ": error: '" << set->symbol
             << "' is not an integer constant of the op\n";
        failed = true;
        return false;
      }
      value = c->second;
    }
    constants[p.name] = value;
    constantOrigins[p.name] = set->origin;
  }
  for (auto &[name, value] : options.scheduleParams)
    if (!params.count(name)) {
      errs << value.origin << ": error: the schedule sets '" << name
           << "', which the op does not declare as a param\n";
      failed = true;
      return false;
    }
  return true;
}

bool Emitter::signature(const std::vector<Param> &params, std::vector<std::string> &dimNames,
                        SmallVector<Type> &argTypes, SmallVector<Attribute> &argAttrs) {
  // Dims: integers, constants and params are fixed now; other names are runtime dims.
  std::set<std::string> paramNames;
  for (const Param &p : params) {
    if (paramNames.count(p.name) || constants.count(p.name))
      return error(p.pos, "'" + p.name + "' is declared twice"), false;
    paramNames.insert(p.name);
    for (const Dim &d : p.dims)
      if (!d.name.empty() && !constants.count(d.name) &&
          std::find(dimNames.begin(), dimNames.end(), d.name) == dimNames.end()) {
        if (paramNames.count(d.name))
          return error(d.pos, "'" + d.name + "' names a parameter, not a dim"), false;
        dimNames.push_back(d.name);
      }
  }
  // `N + 1` also makes N a runtime dim (solved from it when nothing else
  // fixes N), so that a kernel taking only cu_seqlens can still use N.
  for (size_t i = 0, e = dimNames.size(); i < e; ++i) {
    size_t plus = dimNames[i].find('+');
    if (plus != std::string::npos &&
        std::find(dimNames.begin(), dimNames.end(), dimNames[i].substr(0, plus)) == dimNames.end())
      dimNames.push_back(dimNames[i].substr(0, plus));
  }
  for (size_t i = 0; i < dimNames.size(); ++i) {
    argTypes.push_back(b.getIndexType());
    argAttrs.push_back(b.getDictionaryAttr({}));
  }
  for (const Param &p : params) {
    Type type = paramType(p);
    if (!type)
      return false;
    argTypes.push_back(type);
    SmallVector<NamedAttribute> attrs = {b.getNamedAttr(tl::kNameAttr, b.getStringAttr(p.name))};
    if (p.isView())
      attrs.push_back(b.getNamedAttr(tl::kAccessAttr, b.getStringAttr(p.access)));
    if (!checkAnnotations(p, type, dimNames, attrs))
      return false;
    argAttrs.push_back(b.getDictionaryAttr(attrs));
  }
  return true;
}

bool Emitter::checkAnnotations(const Param &p, Type type, const std::vector<std::string> &dimNames,
                               SmallVector<NamedAttribute> &attrs) {
  Type elem = isa<tl::ViewType>(type) ? cast<tl::ViewType>(type).getElementType() : type;
  if (p.tolerance > 0) {
    if (!p.isView() || p.access == "in" || !isa<FloatType>(elem))
      return error(p.tolerancePos, "a tolerance is for float outputs (out or inout tensors); '" +
                                       p.name + "' is not one"),
             false;
    attrs.push_back(b.getNamedAttr(tl::kToleranceAttr, b.getF64FloatAttr(p.tolerance)));
  }
  if (!p.offsetsOf.empty()) {
    auto view = dyn_cast<tl::ViewType>(type);
    if (!view || view.getShape().size() != 1 || !elem.isInteger() || elem.isInteger(1) ||
        p.access != "in" || p.hasRange)
      return error(p.offsetsPos, "offsets are for a 1-D integer input with no range; '" + p.name +
                                     "' is not one"),
             false;
    if (!llvm::is_contained(dimNames, p.offsetsOf))
      return error(p.offsetsPos,
                   "'" + p.offsetsOf + "' is not a runtime dim of the parameters (offsets T)"),
             false;
    attrs.push_back(b.getNamedAttr(tl::kOffsetsAttr, b.getStringAttr(p.offsetsOf)));
  }
  if (!p.hasRange)
    return true;
  if (!elem.isInteger() || elem.isInteger(1) || p.access == "out")
    return error(p.rangeLo.pos, "a range is for integer inputs; '" + p.name + "' is " +
                                    (p.access == "out" ? "an output" : "not an integer")),
           false;
  SmallVector<Attribute, 2> bounds;
  for (const Bound *bd : {&p.rangeLo, &p.rangeHi}) {
    if (bd->name.empty()) {
      bounds.push_back(b.getI64IntegerAttr(bd->value));
      continue;
    }
    auto c = constants.find(bd->name);
    if (c != constants.end() && c->second.kind == SVal::Int)
      bounds.push_back(b.getI64IntegerAttr(c->second.i));
    else if (llvm::is_contained(dimNames, bd->name))
      bounds.push_back(b.getStringAttr(bd->name));
    else
      return error(bd->pos, "range bound '" + bd->name +
                                "' is neither an integer const nor a dim of the parameters"),
             false;
  }
  auto lo = dyn_cast<IntegerAttr>(bounds[0]), hi = dyn_cast<IntegerAttr>(bounds[1]);
  if (lo && hi && lo.getInt() >= hi.getInt())
    return error(p.rangeLo.pos, "an empty range: " + std::to_string(lo.getInt()) + ".." +
                                    std::to_string(hi.getInt())),
           false;
  attrs.push_back(b.getNamedAttr(tl::kRangeAttr, b.getArrayAttr(bounds)));
  return true;
}

Type Emitter::paramType(const Param &p) {
  Type elem = dtype(p.dtype);
  if (!elem)
    return error(p.pos, "unknown element type '" + p.dtype + "' of '" + p.name + "'"), Type();
  if (!p.isView()) {
    if (!elem.isF32() && !elem.isInteger(32) && !elem.isInteger(64) &&
        !(options.promoteFloats && elem.isF64()))
      return error(p.pos, "scalar parameters are f32, i32 or i64, not " + p.dtype), Type();
    return elem;
  }
  if (elem.isInteger(1))
    return error(p.pos, "tensors of bool are not supported; use i8"), Type();
  SmallVector<int64_t> shape;
  SmallVector<StringAttr> names;
  for (const Dim &d : p.dims) {
    if (d.name.empty()) {
      shape.push_back(d.value);
      names.push_back(b.getStringAttr(""));
      continue;
    }
    if (constants.count(d.name)) {
      const SVal &c = constants[d.name];
      if (c.kind != SVal::Int || c.i <= 0)
        return error(d.pos, "dim '" + d.name + "' must be a positive integer, is " + describe(c)),
               Type();
      shape.push_back(c.i);
      names.push_back(b.getStringAttr(""));
    } else {
      shape.push_back(ShapedType::kDynamic);
      names.push_back(b.getStringAttr(d.name));
    }
  }
  return tl::ViewType::get(&ctx, shape, names, elem);
}

DictionaryAttr Emitter::constsAttr() {
  SmallVector<NamedAttribute> consts;
  for (const Const &c : program->consts) {
    if (c.type == "dtype") {
      consts.push_back(b.getNamedAttr(c.name, b.getStringAttr(typeNames[c.name])));
      continue;
    }
    const SVal &v = constants[c.name];
    if (v.kind == SVal::Int || v.kind == SVal::Bool)
      consts.push_back(b.getNamedAttr(c.name, b.getI64IntegerAttr(v.i)));
  }
  // A dtype param is no integer for the schedule's params attribute: it
  // travels here, so harnesses and the manifest see the type chosen.
  for (const std::string &p : typeParams)
    consts.push_back(b.getNamedAttr(p, b.getStringAttr(typeNames[p])));
  return b.getDictionaryAttr(consts);
}

bool Emitter::emitKernel(const Kernel &k, ModuleOp module) {
  usedIds.clear(); // a schedule names ops within one kernel
  functionIds.clear();
  pendingAliases.clear();
  std::vector<std::string> dimNames;
  SmallVector<Type> argTypes;
  SmallVector<Attribute> argAttrs;
  if (!signature(k.params, dimNames, argTypes, argAttrs))
    return false;
  b.setInsertionPointToEnd(module.getBody());
  auto kernel = tl::KernelOp::create(
      b, loc(k.pos), b.getStringAttr(k.name), TypeAttr::get(b.getFunctionType(argTypes, {})),
      StringAttr(), b.getArrayAttr(argAttrs), ArrayAttr(), namesAttr(dimNames), tl::ScheduleAttr());
  kernel->setAttr("tile.consts", constsAttr());
  Block *entry = &kernel.getBody().emplaceBlock();
  for (Type t : argTypes)
    entry->addArgument(t, loc(k.pos));
  b.setInsertionPointToStart(entry);

  scopes.clear();
  scopes.emplace_back();
  dimValues.clear();
  for (size_t i = 0; i < dimNames.size(); ++i) {
    scopes.back()[dimNames[i]] = {SVal::of(SVal::Index, entry->getArgument(i)), false, k.pos};
    dimValues[dimNames[i]] = entry->getArgument(i);
  }
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param &p = k.params[i];
    Value arg = entry->getArgument(dimNames.size() + i);
    SVal v;
    if (p.isView()) {
      v = SVal::of(SVal::View, arg);
      v.name = p.name;
    } else if (isa<FloatType>(arg.getType())) {
      v = SVal::of(SVal::Tile, tl::SplatOp::create(
                                   b, loc(p.pos), tl::TileType::get(&ctx, {}, arg.getType()), arg));
    } else {
      v = SVal::of(SVal::Index, arith::IndexCastOp::create(b, loc(p.pos), b.getIndexType(), arg));
    }
    scopes.back()[p.name] = {v, false, p.pos};
  }
  // Grid.
  SmallVector<Value> extents;
  SmallVector<Attribute> axisNames;
  if (k.grid.empty() || k.grid.size() > 3)
    return error(k.pos, "a kernel grid has 1 to 3 axes"), false;
  for (const GridAxis &a : k.grid) {
    SVal ext = eval(*a.extent);
    if (!ext.ok())
      return false;
    if (ext.kind == SVal::Int && ext.i <= 0)
      return error(a.extent->pos, "grid extent must be positive, got " + std::to_string(ext.i)),
             false;
    Value v = toIndex(ext, a.extent->pos, "a grid extent");
    if (!v)
      return false;
    extents.push_back(v);
    axisNames.push_back(b.getStringAttr(a.name));
  }
  SmallVector<Type> idxTypes(extents.size(), b.getIndexType());
  auto ids =
      tl::ProgramIdsOp::create(b, loc(k.grid[0].pos), idxTypes, b.getArrayAttr(axisNames), extents);
  for (size_t i = 0; i < k.grid.size(); ++i) {
    if (lookup(k.grid[i].name))
      return error(k.grid[i].pos, "grid axis '" + k.grid[i].name + "' shadows another name"), false;
    scopes.back()[k.grid[i].name] = {SVal::of(SVal::Index, ids.getIds()[i]), false, k.grid[i].pos};
  }
  if (!emitBlock(k.body))
    return false;
  for (auto &[op, name] : functionIds)
    if (!op->hasAttr(tl::kOpIdAttr))
      setUniqueId(op, name);
    else
      pendingAliases.emplace_back(op, name);
  for (auto &[op, name] : pendingAliases)
    addAlias(op, name);
  tl::ReturnOp::create(b, loc(k.pos));
  return true;
}

bool Emitter::emitOp(const OpDecl &o, ModuleOp module) {
  std::vector<std::string> dimNames;
  SmallVector<Type> argTypes;
  SmallVector<Attribute> argAttrs;
  if (!signature(o.params, dimNames, argTypes, argAttrs))
    return false;
  if (module.lookupSymbol(o.name))
    return error(o.pos, "'" + o.name + "' names a kernel and an op"), false;
  b.setInsertionPointToEnd(module.getBody());
  auto op = tl::HostOp::create(b, loc(o.pos), b.getStringAttr(o.name),
                               TypeAttr::get(b.getFunctionType(argTypes, {})), StringAttr(),
                               b.getArrayAttr(argAttrs), ArrayAttr(), namesAttr(dimNames));
  op->setAttr("tile.consts", constsAttr());
  Block *entry = &op.getBody().emplaceBlock();
  for (Type t : argTypes)
    entry->addArgument(t, loc(o.pos));
  b.setInsertionPointToStart(entry);

  // What a launch argument may name: a parameter or a scratch tensor.
  struct Named {
    Value value;
    const Param *decl;
  };
  std::map<std::string, Named> names;
  std::map<std::string, Value> dims;
  for (size_t i = 0; i < dimNames.size(); ++i)
    dims[dimNames[i]] = entry->getArgument(i);
  for (size_t i = 0; i < o.params.size(); ++i)
    names[o.params[i].name] = {entry->getArgument(dimNames.size() + i), &o.params[i]};
  // `dim TP = align(T, 4)`: ceildiv(T, 4) * 4, which planOf reads back.
  for (const AlignedDim &a : o.alignedDims) {
    if (dims.count(a.name) || constants.count(a.name))
      return error(a.pos, "dim '" + a.name + "' is declared twice"), false;
    if (!dims.count(a.of))
      return error(a.ofPos, "'" + a.of + "' is not a dim of the op's parameters"), false;
    int64_t multiple = a.multiple.value;
    if (!a.multiple.name.empty()) {
      auto c = constants.find(a.multiple.name);
      if (c == constants.end() || c->second.kind != SVal::Int)
        return error(a.multiple.pos, "'" + a.multiple.name + "' is not an integer const or param"),
               false;
      multiple = c->second.i;
    }
    if (multiple <= 0)
      return error(a.multiple.pos,
                   "align's multiple must be positive, is " + std::to_string(multiple)),
             false;
    Location l = loc(a.pos);
    Value m = arith::ConstantIndexOp::create(b, l, multiple);
    Value up = arith::CeilDivUIOp::create(b, l, dims[a.of], m);
    dims[a.name] = arith::MulIOp::create(b, l, up, m);
  }
  for (const Param &p : o.scratch) {
    if (names.count(p.name) || constants.count(p.name))
      return error(p.pos, "'" + p.name + "' is declared twice"), false;
    Type type = paramType(p);
    if (!type)
      return false;
    SmallVector<Value> sizes;
    for (const Dim &d : p.dims) {
      if (d.name.empty() || constants.count(d.name))
        continue;
      if (!dims.count(d.name))
        return error(d.pos, "scratch dim '" + d.name +
                                "' is not a dim of the op's parameters; size scratch tensors "
                                "with integers, consts, params and the op's dims"),
               false;
      sizes.push_back(dims[d.name]);
    }
    auto scratch = tl::ScratchOp::create(b, loc(p.pos), type, b.getStringAttr(p.name), sizes);
    names[p.name] = {scratch.getResult(), &p};
  }
  for (const Launch &l : o.launches) {
    auto kernel = module.lookupSymbol<tl::KernelOp>(l.kernel);
    if (!kernel)
      return error(l.pos, "op '" + o.name + "' launches '" + l.kernel +
                              "', which is not a kernel of this file"),
             false;
    unsigned numDims = kernel.getDimNames().size();
    ArrayRef<Type> want = kernel.getFunctionType().getInputs();
    if (l.args.size() != want.size() - numDims)
      return error(l.pos, "kernel '" + l.kernel + "' takes " +
                              std::to_string(want.size() - numDims) + " arguments, got " +
                              std::to_string(l.args.size())),
             false;
    SmallVector<Value> operands;
    for (StringRef d : kernel.getDimNames().getAsValueRange<StringAttr>()) {
      if (!dims.count(d.str()))
        return error(l.pos, "kernel '" + l.kernel + "' has the runtime dim '" + d.str() +
                                "', which no tensor of the op has"),
               false;
      operands.push_back(dims[d.str()]);
    }
    for (auto [i, arg] : llvm::enumerate(l.args)) {
      unsigned k = numDims + i;
      auto kname = kernel.getArgAttrOfType<StringAttr>(k, tl::kNameAttr);
      std::string param = "parameter '" + (kname ? kname.str() : std::to_string(i)) + "'";
      auto it = names.find(arg.first);
      if (it == names.end())
        return error(arg.second, "'" + arg.first +
                                     "' is not a parameter or scratch tensor of op '" + o.name +
                                     "'"),
               false;
      Value v = it->second.value;
      if (v.getType() != want[k])
        return error(arg.second, "'" + arg.first + "' is " + typeName(v.getType()) +
                                     " but kernel '" + l.kernel + "' " + param + " is " +
                                     typeName(want[k]) +
                                     " (a kernel names its dims as the op does)"),
               false;
      StringRef access = kernel.getAccess(k);
      if (it->second.decl->access == "in" && (access == "out" || access == "inout"))
        return error(arg.second, "'" + arg.first + "' is an input of op '" + o.name +
                                     "' but kernel '" + l.kernel + "' writes its " + param),
               false;
      operands.push_back(v);
    }
    tl::LaunchOp::create(b, loc(l.pos), FlatSymbolRefAttr::get(&ctx, l.kernel), operands);
  }
  tl::EndOp::create(b, loc(o.pos));
  return true;
}

OwningOpRef<ModuleOp> Emitter::run(const Program &prog) {
  program = &prog;
  OwningOpRef<ModuleOp> module = ModuleOp::create(FileLineColLoc::get(&ctx, path, 1, 1));
  if (!evalConstants(prog))
    return nullptr;
  scopes.emplace_back();
  for (const StmtP &r : prog.requires)
    if (!emitStmt(*r))
      return nullptr;
  scopes.clear();
  std::set<std::string> fnNames;
  for (const Function &f : prog.functions) {
    if (!fnNames.insert(f.name).second)
      return error(f.pos, "function '" + f.name + "' is defined twice"), nullptr;
  }
  for (const Kernel &k : prog.kernels)
    if (!emitKernel(k, *module))
      return nullptr;
  for (const OpDecl &o : prog.ops)
    if (!emitOp(o, *module))
      return nullptr;
  // Verifier messages point into the source through the op locations.
  SourceDiagnostics diags(ctx, errs);
  diags.addSource(path, text);
  if (mlir::failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> kiln::lang::compileSource(MLIRContext &context, const std::string &path,
                                                const std::string &text,
                                                const CompileOptions &options, raw_ostream &errs) {
  context.loadDialect<tl::TileDialect, arith::ArithDialect, scf::SCFDialect>();
  Error error;
  std::optional<Program> program = parseProgram(text, error);
  if (!program) {
    errs << formatDiagnostic(path, text, error.pos, "error", error.message);
    return nullptr;
  }
  return Emitter(context, path, text, options, errs).run(*program);
}

bool kiln::lang::scanDeclarations(const std::string &path, const std::string &text,
                                  Declarations &decls, raw_ostream &errs) {
  Error error;
  std::optional<Program> program = parseProgram(text, error);
  if (!program) {
    errs << formatDiagnostic(path, text, error.pos, "error", error.message);
    return false;
  }
  for (const Const &c : program->consts)
    decls.consts.push_back(c.name);
  for (const SchedParam &p : program->schedParams)
    decls.scheduleParams.push_back(p.name);
  for (const Kernel &k : program->kernels)
    decls.kernels.push_back(k.name);
  for (const OpDecl &o : program->ops)
    decls.ops.push_back(o.name);
  for (const CheckShape &c : program->checks)
    decls.checkShapes.emplace_back(c.dims.begin(), c.dims.end());
  return true;
}
