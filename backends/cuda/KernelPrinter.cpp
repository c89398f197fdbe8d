//===- KernelPrinter.cpp - values, control flow, arith and llvm ops -------===//
//
// Every SSA value becomes a `const` local named after its op (constants are
// printed where they are used); scf.for and scf.if become C++ loops and
// branches whose carried values are plain locals assigned at the yields.
// Integer ops keep LLVM's wrapping semantics where C++ would not (narrow
// ints through unsigned arithmetic); pointers are `char *` (global, shared,
// local) or a u32 (tensor memory), cast at each access.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/KernelPrinter.h"
#include "dsl/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace kiln;
using namespace kiln::cuda;

//===----------------------------------------------------------------------===//
// Types and literals
//===----------------------------------------------------------------------===//

std::string KernelPrinter::typeOf(Type t) {
  if (t.isInteger(1))
    return "bool";
  if (auto i = dyn_cast<IntegerType>(t))
    switch (i.getWidth()) {
    case 8:
    case 16:
    case 32:
    case 64:
      return "int" + std::to_string(i.getWidth()) + "_t";
    default:
      return "";
    }
  if (isa<IndexType>(t))
    return "int64_t";
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isF16())
    return "__half";
  if (t.isBF16())
    return "__nv_bfloat16";
  if (isa<Float8E4M3FNType>(t)) // its bits: only loaded, stored, bitcast and converted
    return "uint8_t";
  if (auto v = dyn_cast<VectorType>(t)) {
    std::string e = typeOf(v.getElementType());
    if (e.empty() || v.getRank() != 1 || e == "bool")
      return "";
    return "kiln_vec<" + e + ", " + std::to_string(v.getNumElements()) + ">";
  }
  if (auto s = dyn_cast<LLVM::LLVMStructType>(t)) {
    ArrayRef<Type> body = s.getBody();
    if (body.empty() || !llvm::all_equal(body))
      return "";
    std::string e = typeOf(body[0]);
    return e.empty() ? "" : "kiln_array<" + e + ", " + std::to_string(body.size()) + ">";
  }
  if (auto p = dyn_cast<LLVM::LLVMPointerType>(t)) {
    switch (p.getAddressSpace()) {
    case 0: // generic: locals, tensor maps
    case 1: // global
    case 3: // shared (a generic pointer into the CTA's window)
      return "char *";
    case 6: // tensor memory: a 32-bit address
      return "uint32_t";
    default:
      return "";
    }
  }
  return "";
}

/// The unsigned twin of an integer C++ type.
static std::string unsignedOf(Type t) {
  if (t.isInteger(1))
    return "bool";
  unsigned w = isa<IndexType>(t) ? 64 : cast<IntegerType>(t).getWidth();
  return "uint" + std::to_string(w) + "_t";
}

static std::string floatLiteral(const APFloat &v, Type t) {
  if (t.isBF16() || t.isF16()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%04x", (unsigned)v.bitcastToAPInt().getZExtValue());
    return std::string(t.isBF16() ? "__ushort_as_bfloat16" : "__ushort_as_half") +
           "((unsigned short)" + buf + ")";
  }
  bool isFloat = t.isF32();
  if (!v.isFinite()) {
    char buf[64];
    if (isFloat)
      std::snprintf(buf, sizeof buf, "__int_as_float(0x%08x)",
                    (unsigned)v.bitcastToAPInt().getZExtValue());
    else
      std::snprintf(buf, sizeof buf, "__longlong_as_double(0x%016llxLL)",
                    (unsigned long long)v.bitcastToAPInt().getZExtValue());
    return buf;
  }
  char buf[64];
  double d = v.convertToDouble();
  // %.9g round-trips an f32, %.17g an f64.
  std::snprintf(buf, sizeof buf, isFloat ? "%.9g" : "%.17g", d);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  if (isFloat)
    s += "f";
  return d < 0 || (d == 0 && std::signbit(d)) ? "(" + s + ")" : s;
}

static std::string intLiteral(const APInt &v, Type t) {
  if (t.isInteger(1))
    return v.isZero() ? "false" : "true";
  int64_t x = v.getSExtValue();
  bool wide = isa<IndexType>(t) || t.isInteger(64);
  std::string s;
  if (x == INT64_MIN)
    s = "INT64_MIN";
  else if (!wide && x == INT32_MIN)
    s = "INT32_MIN";
  else
    s = std::to_string(x) + (wide && (x > INT32_MAX || x < INT32_MIN) ? "LL" : "");
  if (!wide && !t.isInteger(32))
    s = "(" + KernelPrinter::typeOf(t) + ")" + s;
  return x < 0 ? "(" + s + ")" : s;
}

std::string kiln::cuda::literal(Attribute value, Type t) {
  if (auto i = dyn_cast<IntegerAttr>(value))
    return intLiteral(i.getValue(), t);
  if (auto f = dyn_cast<FloatAttr>(value))
    return floatLiteral(f.getValue(), t);
  if (auto d = dyn_cast<DenseElementsAttr>(value)) {
    auto vt = dyn_cast<VectorType>(t);
    if (!vt)
      return "";
    Type e = vt.getElementType();
    std::string out = KernelPrinter::typeOf(t) + "{{";
    bool first = true;
    for (Attribute a : d.getValues<Attribute>()) {
      out += (first ? "" : ", ") + literal(a, e);
      first = false;
    }
    return out + "}}";
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Values, lines, errors
//===----------------------------------------------------------------------===//

static Attribute constantValue(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto c = dyn_cast_or_null<arith::ConstantOp>(def))
    return c.getValue();
  if (auto c = dyn_cast_or_null<LLVM::ConstantOp>(def))
    return c.getValue();
  return {};
}

std::string KernelPrinter::use(Value v) {
  if (Attribute c = constantValue(v)) {
    std::string s = literal(c, v.getType());
    if (!s.empty())
      return s;
  }
  // Undefined values: any will do; zero keeps nvcc from warning of a read
  // of an unset variable.
  if (isUndefined(v))
    return typeOf(v.getType()) + "{}";
  if (auto addr = v.getDefiningOp<LLVM::AddressOfOp>())
    return "((char *)" + sharedArrayName(addr.getGlobalName()) + ")";
  auto it = names.find(v);
  if (it != names.end())
    return it->second;
  return "/*unnamed*/";
}

std::string KernelPrinter::declare(Value v, StringRef hint) {
  std::string name;
  do
    name = hint.str() + std::to_string(counter++);
  while (taken.count(name));
  taken.insert(name);
  names[v] = name;
  return name;
}

raw_ostream &KernelPrinter::line() {
  if (lineDirectives && sourceLine)
    os << "#line " << sourceLine << " \"" << sourceFile << "\"\n";
  for (unsigned i = 0; i < indent; ++i)
    os << "  ";
  return os;
}

void KernelPrinter::assign(Value result, const std::string &expr) {
  std::string type = typeOf(result.getType());
  std::string name = declare(result);
  if (type.back() == '*')
    line() << type << "const " << name << " = " << expr << ";\n";
  else
    line() << "const " << type << " " << name << " = " << expr << ";\n";
}

bool KernelPrinter::fail(Operation *op, const std::string &message) {
  std::string where;
  llvm::raw_string_ostream ws(where);
  op->getLoc().print(ws);
  *errorOut = where + ": the CUDA emitter cannot express " + message + " (op '" +
              op->getName().getStringRef().str() + "' in kernel '" + func.getSymName().str() + "')";
  return false;
}

/// The extract reading `element` out of an even-length vector of 16-bit
/// values at a constant index, if that is what defines it.
static LLVM::ExtractElementOp pairedElement(Value element, int64_t &index) {
  auto extract = element.getDefiningOp<LLVM::ExtractElementOp>();
  auto vector = extract ? dyn_cast<VectorType>(extract.getVector().getType()) : nullptr;
  APInt i;
  if (!vector || vector.getNumElements() % 2 || vector.getElementTypeBitWidth() != 16 ||
      !matchPattern(extract.getPosition(), m_ConstantInt(&i)))
    return nullptr;
  index = i.getSExtValue();
  return extract;
}

/// Whether `user` reads the 16-bit element it takes as the word holding it
/// (wordHalfOf): an f8e4m3 pair's word converted. Not a bf16 or f16 element
/// widened to f32: from its word (a mask or a shift) decode ran no faster
/// and multi-token decode slower, nvcc widening the state before it issued
/// the first token's loads (bench/RESULTS.md, "2026-11-29, multi-token
/// decode with an f8 state; f8 words in the CUDA source").
static bool readsWord(Operation *user) {
  auto word = dyn_cast<LLVM::BitcastOp>(user);
  return word && word.getArg().getType().isInteger(16) && !word->use_empty() &&
         llvm::all_of(word->getUsers(), [](Operation *u) {
           auto c = dyn_cast<NVVM::ConvertF8x2ToF16x2Op>(u);
           return c && isa<Float8E4M3FNType>(c.getSrcType()) && !c.getRelu();
         });
}

std::optional<KernelPrinter::WordHalf> KernelPrinter::wordHalfOf(Value element) {
  int64_t i = 0;
  LLVM::ExtractElementOp extract = pairedElement(element, i);
  if (!extract)
    return std::nullopt;
  auto vector = cast<VectorType>(extract.getVector().getType());
  return WordHalf{"kiln_bitcast<kiln_vec<uint32_t, " + std::to_string(vector.getNumElements() / 2) +
                      ">>(" + use(extract.getVector()) + ").e[" + std::to_string(i / 2) + "]",
                  i % 2 == 1};
}

void KernelPrinter::planWordReads() {
  func.walk([&](LLVM::ExtractElementOp e) {
    int64_t i = 0;
    if (!pairedElement(e.getResult(), i) || e->use_empty() ||
        !llvm::all_of(e->getUsers(), readsWord))
      return;
    // Every user reads the word instead: neither the element nor an f8
    // pair's bitcast of it is printed (nvcc warns of unused variables).
    elided.insert(e);
    for (Operation *user : e->getUsers())
      if (isa<LLVM::BitcastOp>(user))
        elided.insert(user);
  });
}

/// The .tile position and op ID a location carries, as "file:line:col (id)";
/// `at` is set to that position.
static std::string sourceOf(Location loc, std::string &id, std::optional<FileLineColLoc> &at) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string s = sourceOf(name.getChildLoc(), id, at);
    if (!StringRef(name.getName()).starts_with("role "))
      id = name.getName().str();
    return s;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations()) {
      std::string s = sourceOf(l, id, at);
      if (!s.empty())
        return s;
    }
    return "";
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    at = file;
    return llvm::sys::path::filename(file.getFilename().getValue()).str() + ":" +
           std::to_string(file.getLine()) + ":" + std::to_string(file.getColumn());
  }
  return "";
}

void KernelPrinter::noteSource(Operation *op) {
  std::string id;
  std::optional<FileLineColLoc> at;
  std::string s = sourceOf(op->getLoc(), id, at);
  if (lineDirectives && at) {
    sourceFile = at->getFilename().str();
    sourceLine = at->getLine();
  }
  if (s.empty())
    return;
  if (!id.empty())
    s += " (" + id + ")";
  if (s == lastSource)
    return;
  lastSource = s;
  line() << "// " << s << "\n";
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

static unsigned addressSpace(Value ptr) {
  return cast<LLVM::LLVMPointerType>(ptr.getType()).getAddressSpace();
}

/// A load of global memory the IR marks invariant (read-only while the
/// kernel runs: `ld.global.nc`).
static bool isInvariantGlobalLoad(Operation *op) {
  auto load = dyn_cast<LLVM::LoadOp>(op);
  return load && load.getInvariant() && !load.getVolatile_() &&
         load.getOrdering() == LLVM::AtomicOrdering::not_atomic &&
         addressSpace(load.getAddr()) == 1;
}

/// An `if` that only chooses values: invariant loads (a masked load) and
/// side-effect-free arithmetic, nothing else.
static bool isGuardedInvariantLoad(Operation *op) {
  auto ifOp = dyn_cast<scf::IfOp>(op);
  if (!ifOp || !ifOp.getNumResults())
    return false;
  bool loads = false;
  WalkResult w = ifOp->walk([&](Operation *inner) {
    if (inner == op || isa<scf::YieldOp>(inner) || isPure(inner))
      return WalkResult::advance();
    if (!isInvariantGlobalLoad(inner))
      return WalkResult::interrupt();
    loads = true;
    return WalkResult::advance();
  });
  return loads && !w.wasInterrupted();
}

/// The order a block's ops are printed in: the IR's, except that invariant
/// global loads (bare or masked by an `if`) and the address arithmetic they
/// need move up to just after what they use, as LLVM's scheduling moves
/// them in the PTX build. Printed where the IR has them, they come after
/// the asm of tensor-core products and barriers, whose "memory" clobbers
/// keep nvcc from hoisting them: a scan's next tiles then load after the
/// product they could have overlapped (the split wgmma scan, 36% slower
/// than its PTX build). Invariant loads may move across anything but an
/// acquire or a register decrease.
static SmallVector<Operation *> printOrder(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  // What floats: the loads, then, transitively, the pure ops of this block
  // that compute their operands (nested regions' uses included).
  llvm::SmallPtrSet<Operation *, 32> floats;
  SmallVector<Operation *> work;
  for (Operation *op : ops)
    if (isInvariantGlobalLoad(op) || isGuardedInvariantLoad(op))
      work.push_back(op);
  auto definersInBlock = [&](Operation *op, auto &&fn) {
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (Operation *d = v.getDefiningOp(); d && d->getBlock() == &block)
          fn(d);
    });
  };
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!floats.insert(op).second)
      continue;
    definersInBlock(op, [&](Operation *d) {
      if (isPure(d) && d->getNumRegions() == 0)
        work.push_back(d);
    });
  }
  if (floats.empty())
    return ops;
  // Nothing floats above an op that acquires (an overlapped kernel's flag
  // wait, or a loop or if around one): what another kernel wrote reads
  // correctly only after it. Nor above a decrease of the registers
  // (setmaxnreg.dec): a load moved above it holds its registers across it,
  // and ptxas spills to fit the lower budget (`mtp_sm_90a_prep`'s
  // 32-register prep role spilled 44 bytes so). Above an increase loads
  // may go: they issue sooner, and `decode_sm_90a_tma`'s compute role ran
  // 12% slower with its loads kept below one.
  auto fencesLoads = [](Operation *op) {
    return op
        ->walk([](Operation *inner) {
          auto regs = dyn_cast<NVVM::SetMaxRegisterOp>(inner);
          if (regs && regs.getAction() == NVVM::SetMaxRegisterAction::decrease)
            return WalkResult::interrupt();
          auto a = dyn_cast<LLVM::InlineAsmOp>(inner);
          return a && StringRef(a.getAsmString()).contains("acquire") ? WalkResult::interrupt()
                                                                      : WalkResult::advance();
        })
        .wasInterrupted();
  };
  // Pinned ops keep their order; a floating op goes right after the last
  // op (in the new order) that defines one of its operands, and below the
  // last fence.
  SmallVector<Operation *> order;
  llvm::DenseMap<Operation *, unsigned> at;
  Operation *lastFence = nullptr;
  for (Operation *op : ops) {
    unsigned pos = order.size();
    if (floats.count(op)) {
      pos = lastFence ? at[lastFence] + 1 : 0;
      definersInBlock(op, [&](Operation *d) {
        auto it = at.find(d);
        if (it != at.end())
          pos = std::max(pos, it->second + 1);
      });
    } else if (fencesLoads(op)) {
      lastFence = op;
    }
    order.insert(order.begin() + pos, op);
    for (unsigned i = pos; i < order.size(); ++i)
      at[order[i]] = i;
  }
  return order;
}

bool KernelPrinter::printBlock(Block &block) {
  // Terminators are their parents' business: a yield assigns the carried
  // values or results, the kernel's return ends the function.
  for (Operation *op : printOrder(block))
    if (!printOp(op))
      return false;
  return true;
}

bool KernelPrinter::printFor(Operation *o) {
  auto op = cast<scf::ForOp>(o);
  if (op.getUnsignedCmp())
    return fail(o, "an unsigned loop bound");
  noteSource(o);
  // Carried values: locals declared before the loop, assigned at its yield.
  for (auto [init, arg, result] :
       llvm::zip(op.getInitArgs(), op.getRegionIterArgs(), op.getResults())) {
    std::string name = declare(arg, "carried");
    names[result] = name;
    line() << typeOf(arg.getType()) << " " << name << " = " << use(init) << ";\n";
  }
  std::string iv = declare(op.getInductionVar(), "i");
  std::string type = typeOf(op.getInductionVar().getType());
  // A loop of constant bounds counts in 32 bits, as LLVM narrows it, so
  // ptxas unrolls it alike; the body reads the index at its own width.
  auto small = [](Value v) {
    auto c = dyn_cast_or_null<IntegerAttr>(constantValue(v));
    return c && c.getValue().getSExtValue() >= 0 && c.getValue().getSExtValue() < (1LL << 30);
  };
  bool narrow = type == "int64_t" && small(op.getLowerBound()) && small(op.getUpperBound()) &&
                small(op.getStep());
  std::string loopVar = narrow ? iv + "_" : iv;
  if (op->hasAttr(tile::kRolledLoopAttr))
    line() << "#pragma unroll 1\n";
  line() << "for (" << (narrow ? "int32_t" : type) << " " << loopVar << " = "
         << use(op.getLowerBound()) << "; " << loopVar << " < " << use(op.getUpperBound()) << "; "
         << loopVar << " += " << use(op.getStep()) << ") {\n";
  ++indent;
  if (narrow && !op.getInductionVar().use_empty())
    line() << "const " << type << " " << iv << " = " << loopVar << ";\n";
  lastSource.clear();
  Block *body = op.getBody();
  if (!printBlock(*body))
    return false;
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  // A yield may pass one carried value into another's place: read them all
  // before writing any.
  bool readsCarried = llvm::any_of(
      yield.getOperands(), [&](Value v) { return llvm::is_contained(op.getRegionIterArgs(), v); });
  SmallVector<std::string> values;
  for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
    if (readsCarried && v != op.getRegionIterArgs()[i]) {
      std::string tmp = "next" + std::to_string(counter++);
      line() << "const " << typeOf(v.getType()) << " " << tmp << " = " << use(v) << ";\n";
      values.push_back(tmp);
    } else {
      values.push_back(use(v));
    }
  }
  for (auto [arg, v] : llvm::zip(op.getRegionIterArgs(), values))
    if (names[arg] != v)
      line() << names[arg] << " = " << v << ";\n";
  --indent;
  line() << "}\n";
  lastSource.clear();
  return true;
}

static int64_t byteSize(Type t);

/// A masked store's helper: one predicated `st.global` of T's bits (1, 2, 4,
/// 8 or 16 bytes). Written as `if (p) store`, nvcc sinks the address's
/// arithmetic into each branch and recomputes it there, store by store (the
/// split prefill's scans: 15 instructions an element of their output);
/// here the address is an operand, computed before it as the PTX build
/// computes it, and the branch is a predicate, as ptxas makes of the PTX
/// build's. CUTLASS stores through generic pointers with st.global alike.
static const char *kStoreIfHelper =
    R"(template <int Bytes, int Off> struct kiln_st_global;
template <int Off> struct kiln_st_global<1, Off> {
  static __device__ __forceinline__ void run(uint32_t p, char *a, const void *v) {
    asm volatile("{ .reg .pred q; setp.ne.b32 q, %0, 0; @q st.global.b8 [%1+%3], %2; }" :: "r"(p), "l"(a), "h"((uint16_t)*(const uint8_t *)v), "n"(Off) : "memory");
  }
};
template <int Off> struct kiln_st_global<2, Off> {
  static __device__ __forceinline__ void run(uint32_t p, char *a, const void *v) {
    asm volatile("{ .reg .pred q; setp.ne.b32 q, %0, 0; @q st.global.b16 [%1+%3], %2; }" :: "r"(p), "l"(a), "h"(*(const uint16_t *)v), "n"(Off) : "memory");
  }
};
template <int Off> struct kiln_st_global<4, Off> {
  static __device__ __forceinline__ void run(uint32_t p, char *a, const void *v) {
    asm volatile("{ .reg .pred q; setp.ne.b32 q, %0, 0; @q st.global.b32 [%1+%3], %2; }" :: "r"(p), "l"(a), "r"(*(const uint32_t *)v), "n"(Off) : "memory");
  }
};
template <int Off> struct kiln_st_global<8, Off> {
  static __device__ __forceinline__ void run(uint32_t p, char *a, const void *v) {
    const uint2 w = *(const uint2 *)v;
    asm volatile("{ .reg .pred q; setp.ne.b32 q, %0, 0; @q st.global.v2.b32 [%1+%4], {%2, %3}; }" :: "r"(p), "l"(a), "r"(w.x), "r"(w.y), "n"(Off) : "memory");
  }
};
template <int Off> struct kiln_st_global<16, Off> {
  static __device__ __forceinline__ void run(uint32_t p, char *a, const void *v) {
    const uint4 w = *(const uint4 *)v;
    asm volatile("{ .reg .pred q; setp.ne.b32 q, %0, 0; @q st.global.v4.b32 [%1+%6], {%2, %3, %4, %5}; }" :: "r"(p), "l"(a), "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w), "n"(Off) : "memory");
  }
};
template <int Off = 0, class T> __device__ __forceinline__ void kiln_store_if(bool p, char *a, const T &v) {
  kiln_st_global<sizeof(T), Off>::run(p, a, &v);
})";

/// The store of an `if` that holds nothing else, without results or an
/// else: a masked store to global memory of a size st.global moves. (An
/// `if` that also builds the stored vector stays an `if`: built before it
/// for a predicated store, `_cp`'s chunk kernel spilled 64 bytes.)
static LLVM::StoreOp maskedGlobalStore(scf::IfOp op) {
  if (op.getNumResults() ||
      (!op.getElseRegion().empty() && !op.elseBlock()->without_terminator().empty()))
    return {};
  auto ops = op.thenBlock()->without_terminator();
  if (!llvm::hasSingleElement(ops))
    return {};
  auto store = dyn_cast<LLVM::StoreOp>(*ops.begin());
  if (!store || store.getVolatile_() || store.getOrdering() != LLVM::AtomicOrdering::not_atomic ||
      addressSpace(store.getAddr()) != 1)
    return {};
  int64_t bytes = byteSize(store.getValue().getType());
  if (!llvm::is_contained({1, 2, 4, 8, 16}, bytes) ||
      (int64_t)store.getAlignment().value_or(0) < bytes)
    return {};
  return store;
}

bool KernelPrinter::printIf(Operation *o) {
  auto op = cast<scf::IfOp>(o);
  if (LLVM::StoreOp store = maskedGlobalStore(op)) {
    noteSource(store);
    helpers.use("kiln_store_if", kStoreIfHelper);
    std::string address = use(store.getAddr()), offset;
    if (auto it = storeOffsets.find(store); it != storeOffsets.end()) {
      auto gep = cast<LLVM::GEPOp>(store.getAddr().getDefiningOp());
      int64_t size = byteSize(gep.getElemType());
      address = use(gep.getBase()) + " + " + use(it->second.first) +
                (size == 1 ? "" : " * " + std::to_string(size));
      offset = "<" + std::to_string(it->second.second) + ">";
    }
    line() << "kiln_store_if" << offset << "(" << use(op.getCondition()) << ", " << address << ", "
           << use(store.getValue()) << ");\n";
    return true;
  }
  // A branch over roles says which (its location names them).
  if (auto name = dyn_cast<NameLoc>(op.getLoc());
      name && StringRef(name.getName()).starts_with("role "))
    line() << "// " << name.getName().str() << "\n";
  else
    noteSource(o);
  // A vector of 16-bit (or narrower) elements is chosen as its 32-bit
  // words: assigned element by element in a branch, nvcc moves each half
  // word with a byte permute (a masked bf16 load: two PRMT an element),
  // where the PTX build selects whole registers.
  auto words = [&](Type t) -> int64_t {
    auto v = dyn_cast<VectorType>(t);
    if (!v || v.getElementTypeBitWidth() >= 32)
      return 0;
    int64_t bits = v.getNumElements() * v.getElementTypeBitWidth();
    return bits % 32 == 0 ? bits / 32 : 0;
  };
  auto wordsType = [](int64_t n) { return "kiln_vec<uint32_t, " + std::to_string(n) + ">"; };
  SmallVector<std::string> chosen;
  for (Value r : op.getResults()) {
    std::string name = declare(r, "chosen");
    int64_t n = words(r.getType());
    chosen.push_back(n ? name + "_words" : name);
    line() << (n ? wordsType(n) : typeOf(r.getType())) << " " << chosen.back() << ";\n";
  }
  auto printRegion = [&](Region &region) {
    ++indent;
    lastSource.clear();
    Block &block = region.front();
    if (!printBlock(block))
      return false;
    for (auto [r, v, to] :
         llvm::zip(op.getResults(), block.getTerminator()->getOperands(), chosen)) {
      int64_t n = words(r.getType());
      // (Zeros, a masked load's other side, as zero words.)
      Attribute value;
      auto dense = matchPattern(v, m_Constant(&value)) ? dyn_cast<DenseElementsAttr>(value)
                                                       : DenseElementsAttr();
      bool zeros = dense && dense.isSplat() && isa<FloatType>(dense.getElementType()) &&
                   dense.getSplatValue<APFloat>().isPosZero();
      line() << to << " = "
             << (!n      ? use(v)
                 : zeros ? wordsType(n) + "{}"
                         : "kiln_bitcast<" + wordsType(n) + ">(" + use(v) + ")")
             << ";\n";
    }
    --indent;
    return true;
  };
  line() << "if (" << use(op.getCondition()) << ") {\n";
  if (!printRegion(op.getThenRegion()))
    return false;
  if (!op.getElseRegion().empty() &&
      (op.getNumResults() || !op.elseBlock()->without_terminator().empty())) {
    line() << "} else {\n";
    if (!printRegion(op.getElseRegion()))
      return false;
  }
  line() << "}\n";
  for (auto [r, from] : llvm::zip(op.getResults(), chosen))
    if (words(r.getType()))
      line() << "const " << typeOf(r.getType()) << " " << names[r] << " = kiln_bitcast<"
             << typeOf(r.getType()) << ">(" << from << ");\n";
  lastSource.clear();
  return true;
}

bool KernelPrinter::printOp(Operation *op) {
  if (elided.count(op))
    return true; // read where its user is printed
  if (isa<LLVM::UndefOp, LLVM::PoisonOp>(op))
    return true; // printed where used
  if (isa<arith::ConstantOp, LLVM::ConstantOp, LLVM::AddressOfOp>(op)) {
    // Printed where they are used; a constant with no C literal is refused.
    if (!isa<LLVM::AddressOfOp>(op) &&
        literal(constantValue(op->getResult(0)), op->getResult(0).getType()).empty())
      return fail(op, "a constant of this type");
    return true;
  }
  for (Value r : op->getResults())
    if (typeOf(r.getType()).empty()) {
      std::string t;
      llvm::raw_string_ostream ts(t);
      r.getType().print(ts);
      return fail(op, "a value of type " + t);
    }
  if (isa<scf::ForOp>(op))
    return printFor(op);
  if (isa<scf::IfOp>(op))
    return printIf(op);
  noteSource(op);
  StringRef dialect = op->getDialect() ? op->getDialect()->getNamespace() : "";
  if (dialect == "arith")
    return printArith(op);
  if (dialect == "math")
    return printMath(op);
  if (dialect == "nvvm")
    return printNvvm(op);
  if (dialect == "llvm")
    return printLLVM(op);
  return fail(op, "this op");
}

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

/// Whether C++ arithmetic on `t` would be undefined where LLVM's wraps (or
/// would promote and not wrap): narrow signed ints go through unsigned.
static bool wrapsThroughUnsigned(Type t) {
  return isa<IntegerType>(t) && !t.isInteger(64) && !t.isInteger(1);
}

bool KernelPrinter::printArith(Operation *op) {
  Value r = op->getNumResults() ? op->getResult(0) : Value();
  auto operand = [&](unsigned i) { return use(op->getOperand(i)); };
  Type type = r ? r.getType() : Type();
  std::string T = r ? typeOf(type) : "";
  auto binary = [&](StringRef sym) {
    assign(r, operand(0) + " " + sym.str() + " " + operand(1));
    return true;
  };
  auto unsignedBinary = [&](StringRef sym) {
    std::string U = unsignedOf(type);
    assign(r, "(" + T + ")((" + U + ")" + operand(0) + " " + sym.str() + " (" + U + ")" +
                  operand(1) + ")");
    return true;
  };
  auto wrapping = [&](StringRef sym) {
    return wrapsThroughUnsigned(type) ? unsignedBinary(sym) : binary(sym);
  };
  auto pick = [&](StringRef cmp, bool isUnsigned) {
    std::string a = operand(0), b = operand(1);
    if (isUnsigned) {
      std::string U = unsignedOf(type);
      assign(r, "(" + T + ")((" + U + ")" + a + " " + cmp.str() + " (" + U + ")" + b + " ? " + a +
                    " : " + b + ")");
    } else {
      assign(r, "(" + a + " " + cmp.str() + " " + b + " ? " + a + " : " + b + ")");
    }
    return true;
  };
  // maximumf / minimumf: NaN-propagating, as PTX's max.NaN / min.NaN.
  auto nanPick = [&](const std::string &which) {
    if (!type.isF32())
      return fail(op, "a NaN-propagating " + which + "imum of this type");
    std::string name = "kiln_" + which + "_nan";
    helpers.use(name, "__device__ __forceinline__ float " + name +
                          "(float a, float b) {\n  float r;\n  asm(\"" + which +
                          ".NaN.f32 %0, %1, %2;\" : \"=f\"(r) : \"f\"(a), \"f\"(b));\n"
                          "  return r;\n}");
    assign(r, name + "(" + operand(0) + ", " + operand(1) + ")");
    return true;
  };
  auto convert = [&](const std::string &to) {
    // index and i64 are both int64_t: their casts are no code.
    if (typeOf(op->getOperand(0).getType()) == to && !constantValue(op->getOperand(0)))
      names[r] = operand(0);
    else
      assign(r, "(" + to + ")" + operand(0));
    return true;
  };
  // A sum or difference planned as an fma (planFusedProducts).
  auto fused = [&](bool sub) {
    auto it = fusedProduct.find(op);
    if (it == fusedProduct.end())
      return false;
    auto m = cast<arith::MulFOp>(it->second);
    bool productFirst = op->getOperand(0) == m.getResult();
    std::string a = use(m.getLhs()), b = use(m.getRhs()), c = operand(productFirst ? 1 : 0);
    if (sub && productFirst)
      c = "-(" + c + ")"; // x y - z
    else if (sub)
      a = "-(" + a + ")"; // z - x y
    assign(r, "__fmaf_rn(" + a + ", " + b + ", " + c + ")");
    return true;
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](arith::AddIOp) { return wrapping("+"); })
      .Case([&](arith::SubIOp) { return wrapping("-"); })
      .Case([&](arith::MulIOp) { return wrapping("*"); })
      .Case([&](arith::DivSIOp) { return binary("/"); })
      .Case([&](arith::RemSIOp) { return binary("%"); })
      .Case([&](arith::DivUIOp) { return unsignedBinary("/"); })
      .Case([&](arith::RemUIOp) { return unsignedBinary("%"); })
      .Case([&](arith::AndIOp) { return binary("&"); })
      .Case([&](arith::OrIOp) { return binary("|"); })
      .Case([&](arith::XOrIOp) { return binary("^"); })
      .Case([&](arith::ShLIOp) { return unsignedBinary("<<"); })
      .Case([&](arith::ShRUIOp) { return unsignedBinary(">>"); })
      .Case([&](arith::ShRSIOp) { return binary(">>"); })
      .Case([&](arith::MinSIOp) { return pick("<", false); })
      .Case([&](arith::MaxSIOp) { return pick(">", false); })
      .Case([&](arith::MinUIOp) { return pick("<", true); })
      .Case([&](arith::MaxUIOp) { return pick(">", true); })
      .Case([&](arith::AddFOp) { return fused(false) || binary("+"); })
      .Case([&](arith::SubFOp) { return fused(true) || binary("-"); })
      .Case([&](arith::MulFOp) { return binary("*"); })
      .Case([&](arith::DivFOp) { return binary("/"); })
      .Case([&](arith::NegFOp) {
        assign(r, "-" + operand(0));
        return true;
      })
      .Case([&](arith::MaximumFOp) { return nanPick("max"); })
      .Case([&](arith::MinimumFOp) { return nanPick("min"); })
      .Case([&](arith::CmpIOp c) {
        Type t = c.getLhs().getType();
        std::string a = operand(0), b = operand(1);
        bool isUnsigned = false;
        std::string sym;
        switch (c.getPredicate()) {
        case arith::CmpIPredicate::eq:
          sym = "==";
          break;
        case arith::CmpIPredicate::ne:
          sym = "!=";
          break;
        case arith::CmpIPredicate::slt:
          sym = "<";
          break;
        case arith::CmpIPredicate::sle:
          sym = "<=";
          break;
        case arith::CmpIPredicate::sgt:
          sym = ">";
          break;
        case arith::CmpIPredicate::sge:
          sym = ">=";
          break;
        case arith::CmpIPredicate::ult:
          sym = "<";
          isUnsigned = true;
          break;
        case arith::CmpIPredicate::ule:
          sym = "<=";
          isUnsigned = true;
          break;
        case arith::CmpIPredicate::ugt:
          sym = ">";
          isUnsigned = true;
          break;
        case arith::CmpIPredicate::uge:
          sym = ">=";
          isUnsigned = true;
          break;
        }
        // Against an unsigned 0 (nvcc warns of the pointless comparisons).
        Attribute rhs = constantValue(c.getRhs());
        if (isUnsigned && rhs && cast<IntegerAttr>(rhs).getValue().isZero()) {
          switch (c.getPredicate()) {
          case arith::CmpIPredicate::uge:
            assign(r, "true");
            return true;
          case arith::CmpIPredicate::ult:
            assign(r, "false");
            return true;
          case arith::CmpIPredicate::ule:
            sym = "==";
            isUnsigned = false;
            break;
          case arith::CmpIPredicate::ugt:
            sym = "!=";
            isUnsigned = false;
            break;
          default:
            break;
          }
        }
        if (isUnsigned && !t.isInteger(1)) {
          std::string U = unsignedOf(t);
          a = "(" + U + ")" + a;
          b = "(" + U + ")" + b;
        }
        assign(r, a + " " + sym + " " + b);
        return true;
      })
      .Case([&](arith::CmpFOp c) {
        std::string a = operand(0), b = operand(1), e;
        using P = arith::CmpFPredicate;
        switch (c.getPredicate()) {
        case P::OEQ:
          e = a + " == " + b;
          break;
        case P::OGT:
          e = a + " > " + b;
          break;
        case P::OGE:
          e = a + " >= " + b;
          break;
        case P::OLT:
          e = a + " < " + b;
          break;
        case P::OLE:
          e = a + " <= " + b;
          break;
        case P::ONE:
          e = "(" + a + " < " + b + " || " + a + " > " + b + ")";
          break;
        case P::ORD:
          e = "(" + a + " == " + a + " && " + b + " == " + b + ")";
          break;
        case P::UEQ:
          e = "!(" + a + " < " + b + " || " + a + " > " + b + ")";
          break;
        case P::UGT:
          e = "!(" + a + " <= " + b + ")";
          break;
        case P::UGE:
          e = "!(" + a + " < " + b + ")";
          break;
        case P::ULT:
          e = "!(" + a + " >= " + b + ")";
          break;
        case P::ULE:
          e = "!(" + a + " > " + b + ")";
          break;
        case P::UNE:
          e = a + " != " + b;
          break;
        case P::UNO:
          e = "(" + a + " != " + a + " || " + b + " != " + b + ")";
          break;
        case P::AlwaysTrue:
          e = "true";
          break;
        case P::AlwaysFalse:
          e = "false";
          break;
        }
        assign(r, e);
        return true;
      })
      .Case([&](arith::SelectOp) {
        assign(r, operand(0) + " ? " + operand(1) + " : " + operand(2));
        return true;
      })
      .Case([&](arith::ExtFOp) {
        Type from = op->getOperand(0).getType();
        if (from.isBF16())
          // Exact: a bf16 is the high half of its f32. A shift, not
          // __bfloat162float's inline asm, so nvcc sees through it and can
          // merge the loads feeding it.
          assign(r, helpers.use("kiln_bf16_to_f32",
                                "__device__ __forceinline__ float kiln_bf16_to_f32(__nv_bfloat16 "
                                "x) {\n  return __uint_as_float((uint32_t)__bfloat16_as_ushort(x) "
                                "<< 16);\n}") +
                        "(" + operand(0) + ")");
        else if (from.isF16())
          assign(r, "__half2float(" + operand(0) + ")");
        else
          return convert(T);
        return true;
      })
      .Case([&](arith::TruncFOp t) {
        if (t.getRoundingmodeAttr())
          return fail(op, "a rounding mode on a float truncation");
        if (type.isBF16())
          assign(r, "__float2bfloat16_rn(" + operand(0) + ")");
        else if (type.isF16())
          assign(r, "__float2half_rn(" + operand(0) + ")");
        else
          return convert(T);
        return true;
      })
      .Case([&](arith::ExtUIOp) {
        Type from = op->getOperand(0).getType();
        if (from.isInteger(1))
          return convert(T);
        assign(r, "(" + T + ")(" + unsignedOf(from) + ")" + operand(0));
        return true;
      })
      .Case([&](arith::ExtSIOp) {
        if (op->getOperand(0).getType().isInteger(1))
          assign(r, operand(0) + " ? (" + T + ")-1 : (" + T + ")0");
        else
          return convert(T);
        return true;
      })
      .Case([&](arith::TruncIOp) {
        if (type.isInteger(1))
          assign(r, "(" + operand(0) + " & 1) != 0");
        else
          return convert(T);
        return true;
      })
      .Case([&](arith::IndexCastOp) { return convert(T); })
      .Case([&](arith::IndexCastUIOp) {
        Type from = op->getOperand(0).getType();
        if (isa<IndexType>(from) || from.isInteger(1) || from.isInteger(64))
          return convert(T);
        assign(r, "(" + T + ")(" + unsignedOf(from) + ")" + operand(0));
        return true;
      })
      .Case([&](arith::SIToFPOp) { return convert(T); })
      .Case([&](arith::FPToSIOp) { return convert(T); })
      .Case([&](arith::UIToFPOp) {
        assign(r, "(" + T + ")(" + unsignedOf(op->getOperand(0).getType()) + ")" + operand(0));
        return true;
      })
      .Case([&](arith::BitcastOp) {
        assign(r, "kiln_bitcast<" + T + ">(" + operand(0) + ")");
        return true;
      })
      .Default([&](Operation *) { return fail(op, "this arith op"); });
}

//===----------------------------------------------------------------------===//
// math: what the GPU path leaves of it (its transcendentals are NVVM
// approximations already), as CUDA's correctly rounded functions, which is
// what NVPTX selects for the same LLVM intrinsics.
//===----------------------------------------------------------------------===//

bool KernelPrinter::printMath(Operation *op) {
  Value r = op->getResult(0);
  Type t = r.getType();
  bool f32 = t.isF32(), f64 = t.isF64();
  auto call = [&](const char *f32Name, const char *f64Name) {
    if (!f32 && !f64)
      return fail(op, "this math op on a type other than f32 or f64");
    std::string args;
    for (Value v : op->getOperands())
      args += (args.empty() ? "" : ", ") + use(v);
    assign(r, std::string(f32 ? f32Name : f64Name) + "(" + args + ")");
    return true;
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](math::SqrtOp) { return call("sqrtf", "sqrt"); })
      .Case([&](math::AbsFOp) { return call("fabsf", "fabs"); })
      .Case([&](math::CopySignOp) { return call("copysignf", "copysign"); })
      .Case([&](math::FmaOp) { return call("fmaf", "fma"); })
      .Case([&](math::AbsIOp) {
        std::string x = use(op->getOperand(0));
        assign(r, x + " < 0 ? (" + typeOf(t) + ")-" + x + " : " + x);
        return true;
      })
      .Default([&](Operation *) { return fail(op, "this math op"); });
}

//===----------------------------------------------------------------------===//
// llvm
//===----------------------------------------------------------------------===//

static int64_t byteSize(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getNumElements() * byteSize(v.getElementType());
  if (isa<IndexType>(t))
    return 8;
  if (t.isInteger(1))
    return 1;
  return t.getIntOrFloatBitWidth() / 8;
}

/// A load's helper: the read-only path (`ld.global.nc`) for invariant loads
/// of global memory, as the NVPTX backend chooses.
static const char *kLdgHelper =
    R"(template <class T> __device__ __forceinline__ T kiln_ldg(const char *p) {
  // Invariant global loads take the read-only path, moving T's bits whole.
  using Bits = typename kiln_bits<sizeof(T)>::type;
  T v;
  *reinterpret_cast<Bits *>(&v) = __ldg(reinterpret_cast<const Bits *>(p));
  return v;
})";

bool KernelPrinter::printLLVM(Operation *op) {
  Value r = op->getNumResults() ? op->getResult(0) : Value();
  std::string T = r ? typeOf(r.getType()) : "";
  auto operand = [&](unsigned i) { return use(op->getOperand(i)); };
  // A copy of an aggregate with one member replaced.
  auto insert = [&](Value aggregate, const std::string &index, Value member) {
    std::string name = declare(r);
    line() << T << " " << name << " = " << use(aggregate) << ";\n";
    line() << name << ".e[" << index << "] = " << use(member) << ";\n";
    return true;
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](LLVM::GEPOp gep) {
        if (gep.getIndices().size() != 1)
          return fail(op, "a multi-index getelementptr");
        int64_t size = byteSize(gep.getElemType());
        std::string base = use(gep.getBase());
        auto index = gep.getIndices()[0];
        std::string offset;
        if (auto c = dyn_cast<IntegerAttr>(index))
          offset = std::to_string(c.getInt() * size);
        else
          offset = use(cast<Value>(index)) + (size == 1 ? "" : " * " + std::to_string(size));
        assign(r, base + " + " + offset);
        return true;
      })
      .Case([&](LLVM::LoadOp load) {
        if (load.getVolatile_() || load.getOrdering() != LLVM::AtomicOrdering::not_atomic)
          return fail(op, "a volatile or atomic load");
        if (isa<VectorType>(r.getType()) &&
            (int64_t)load.getAlignment().value_or(0) < byteSize(r.getType()))
          return fail(op, "a vector load aligned below its size");
        std::string ptr = use(load.getAddr());
        if (load.getInvariant() && addressSpace(load.getAddr()) == 1) {
          helpers.use("kiln_ldg", kLdgHelper);
          assign(r, "kiln_ldg<" + T + ">(" + ptr + ")");
        } else {
          // The IR's alignment, where it says more than the type's, lets
          // nvcc merge neighbouring loads into vectors as LLVM does.
          int64_t align = load.getAlignment().value_or(0);
          assign(r, "kiln_load<" + T +
                        (align > byteSize(r.getType()) ? ", " + std::to_string(align) : "") + ">(" +
                        ptr + ")");
        }
        return true;
      })
      .Case([&](LLVM::StoreOp store) {
        if (store.getVolatile_() || store.getOrdering() != LLVM::AtomicOrdering::not_atomic)
          return fail(op, "a volatile or atomic store");
        Value v = store.getValue();
        if (isa<VectorType>(v.getType()) &&
            (int64_t)store.getAlignment().value_or(0) < byteSize(v.getType()))
          return fail(op, "a vector store aligned below its size");
        // A vector of 8 or 16 bytes to global memory as one st.global.v2 /
        // .v4. As a plain store nvcc split some into 4-byte stores (the bf16
        // GEMM with an MMA warpgroup: 128 STG.E where the PTX build has 16
        // STG.E.128 and 64 STG.E; the f16 test matmul's first pair of each
        // row: 12% slower than its PTX build). __stwb would keep them whole
        // too, but as strong stores (STG.E.64.STRONG.SM).
        if (addressSpace(store.getAddr()) == 1 && isa<VectorType>(v.getType()) &&
            (byteSize(v.getType()) == 8 || byteSize(v.getType()) == 16)) {
          helpers.use("kiln_store_if", kStoreIfHelper);
          line() << "kiln_store_if(true, " << use(store.getAddr()) << ", " << use(v) << ");\n";
          return true;
        }
        line() << "kiln_store<"
               << std::max<int64_t>(store.getAlignment().value_or(0), byteSize(v.getType())) << ">("
               << use(store.getAddr()) << ", " << use(v) << ");\n";
        return true;
      })
      .Case([&](LLVM::AllocaOp alloca) {
        Attribute n = constantValue(alloca.getArraySize());
        std::string elem = typeOf(alloca.getElemType());
        if (!n || elem.empty())
          return fail(op, "a local array of this size or type");
        std::string storage = "local" + std::to_string(counter++);
        line() << elem << " " << storage << "[" << cast<IntegerAttr>(n).getInt() << "];\n";
        assign(r, "(char *)" + storage);
        return true;
      })
      .Case([&](LLVM::ExtractValueOp e) {
        if (e.getPosition().size() != 1)
          return fail(op, "a nested extractvalue");
        assign(r, operand(0) + ".e[" + std::to_string(e.getPosition()[0]) + "]");
        return true;
      })
      .Case([&](LLVM::InsertValueOp e) {
        if (e.getPosition().size() != 1)
          return fail(op, "a nested insertvalue");
        return insert(e.getContainer(), std::to_string(e.getPosition()[0]), e.getValue());
      })
      .Case([&](LLVM::InsertElementOp e) {
        return insert(e.getVector(), use(e.getPosition()), e.getValue());
      })
      .Case([&](LLVM::ExtractElementOp e) {
        assign(r, use(e.getVector()) + ".e[" + use(e.getPosition()) + "]");
        return true;
      })
      .Case([&](LLVM::BitcastOp) {
        assign(r, "kiln_bitcast<" + T + ">(" + operand(0) + ")");
        return true;
      })
      .Case([&](LLVM::IntToPtrOp) {
        if (addressSpace(r) == 6)
          assign(r, "(uint32_t)" + operand(0));
        else
          assign(r, "(char *)" + operand(0));
        return true;
      })
      .Case([&](LLVM::PtrToIntOp p) {
        unsigned as = addressSpace(p.getArg());
        if (as == 3)
          assign(r, "(" + T + ")" + smemAddress(p.getArg()));
        else if (as == 6)
          assign(r, "(" + T + ")" + operand(0));
        else
          assign(r, "(" + T + ")(uintptr_t)" + operand(0));
        return true;
      })
      .Case([&](LLVM::FMAOp) {
        if (!r.getType().isF32() && !r.getType().isF64())
          return fail(op, "a fused multiply-add of this type");
        assign(r, std::string(r.getType().isF32() ? "fmaf" : "fma") + "(" + operand(0) + ", " +
                      operand(1) + ", " + operand(2) + ")");
        return true;
      })
      .Case([&](LLVM::InlineAsmOp a) { return printInlineAsm(a); })
      .Case([&](LLVM::CallIntrinsicOp c) { return printIntrinsic(c); })
      .Default([&](Operation *) { return fail(op, "this llvm op"); });
}

std::string KernelPrinter::smemAddress(Value v) {
  return "(uint32_t)__cvta_generic_to_shared(" + use(v) + ")";
}

/// The C++ constraint letter of an asm operand of type `t`.
static std::string constraintOf(Type t) {
  if (t.isInteger(16))
    return "h";
  if (t.isInteger(32))
    return "r";
  if (t.isInteger(64) || isa<IndexType>(t) || isa<LLVM::LLVMPointerType>(t))
    return "l";
  if (t.isF32())
    return "f";
  if (t.isF64())
    return "d";
  return "";
}

bool KernelPrinter::printInlineAsm(LLVM::InlineAsmOp a) {
  Operation *op = a;
  SmallVector<StringRef> constraints;
  if (!a.getConstraints().empty())
    StringRef(a.getConstraints()).split(constraints, ',');
  // A memory clobber (griddepcontrol.wait's) is the "memory" every volatile
  // asm here has.
  bool clobbersMemory = llvm::is_contained(constraints, "~{memory}");
  llvm::erase(constraints, "~{memory}");
  // Outputs: the result, or each member of a struct result.
  SmallVector<Type> outTypes;
  std::string result;
  bool isStruct = false;
  if (op->getNumResults()) {
    Type t = op->getResult(0).getType();
    if (auto s = dyn_cast<LLVM::LLVMStructType>(t)) {
      llvm::append_range(outTypes, s.getBody());
      isStruct = true;
    } else {
      outTypes.push_back(t);
    }
    if (Value from = inPlaceAsm.lookup(op)) {
      result = nameOf(from);
      alias(op->getResult(0), result);
    } else {
      result = declare(op->getResult(0));
      line() << typeOf(t) << " " << result << ";\n";
    }
  }
  bool inPlace = inPlaceAsm.count(op);
  size_t numOut = outTypes.size();
  if (constraints.size() != numOut + op->getNumOperands())
    return fail(op, "inline asm with clobbers or indirect operands");
  auto output = [&](size_t i) {
    return isStruct ? result + ".e[" + std::to_string(i) + "]" : result;
  };
  // nvcc takes no matching ("0") constraints: an input tied to an output
  // initialises it, and the output becomes read-write ("+").
  SmallVector<bool> readWrite(numOut, false);
  SmallVector<unsigned> renumber(numOut + op->getNumOperands());
  std::string ins;
  unsigned next = numOut;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    StringRef c = constraints[numOut + i];
    unsigned tiedTo;
    if (!c.empty() && !c.getAsInteger(10, tiedTo)) {
      if (tiedTo >= numOut)
        return fail(op, "an inline asm input tied to no output");
      renumber[numOut + i] = tiedTo;
      // In place, the member is already in its register; an undefined
      // input leaves the output write-only (no move to place between a
      // wgmma.fence and the product that overwrites it).
      if (!inPlace && isUndefined(v))
        continue;
      if (!inPlace)
        line() << output(tiedTo) << " = " << use(v) << ";\n";
      readWrite[tiedTo] = true;
      continue;
    }
    if (c != constraintOf(v.getType()))
      return fail(op, "an inline asm input constraint '" + c.str() + "'");
    std::string value = use(v);
    if (isa<LLVM::LLVMPointerType>(v.getType()))
      // A shared address is 32 bits in C++ but an "l" operand here, as LLVM
      // passes it.
      value =
          addressSpace(v) == 3 ? "(uint64_t)" + smemAddress(v) : "(uint64_t)(uintptr_t)" + value;
    ins += (next > numOut ? ", " : "") + ("\"" + c.str() + "\"(" + value + ")");
    renumber[numOut + i] = next++;
  }
  std::string outs;
  for (size_t i = 0; i < numOut; ++i) {
    StringRef c = constraints[i];
    if (!c.consume_front("=") || constraintOf(outTypes[i]) != c)
      return fail(op, "an inline asm output constraint '" + constraints[i].str() + "'");
    renumber[i] = i;
    outs += (i ? ", " : "") +
            ("\"" + std::string(readWrite[i] ? "+" : "=") + c.str() + "\"(" + output(i) + ")");
  }
  // LLVM's `$N` placeholders become `%N` as renumbered; a literal `%`
  // doubles; the text is quoted as a C string.
  std::string text;
  StringRef asmString = a.getAsmString();
  for (size_t i = 0; i < asmString.size(); ++i) {
    char c = asmString[i];
    if (c == '$' && i + 1 < asmString.size() && std::isdigit(asmString[i + 1])) {
      size_t j = i + 1;
      unsigned n = 0;
      while (j < asmString.size() && std::isdigit(asmString[j]))
        n = n * 10 + (asmString[j++] - '0');
      if (n >= renumber.size())
        return fail(op, "inline asm naming an operand it does not have");
      text += "%" + std::to_string(renumber[n]);
      i = j - 1;
    } else if (c == '%') {
      text += "%%";
    } else if (c == '\n') {
      text += "\\n";
    } else if (c == '\t') {
      text += "\\t";
    } else if (c == '"' || c == '\\') {
      text += '\\';
      text += c;
    } else {
      text += c;
    }
  }
  line() << "asm" << (a.getHasSideEffects() ? " volatile" : "") << "(\"" << text << "\" : " << outs
         << " : " << ins << (a.getHasSideEffects() || clobbersMemory ? " : \"memory\"" : "")
         << ");\n";
  return true;
}

bool KernelPrinter::updatesInPlace(Value from, Operation *op) {
  Operation *def = from.getDefiningOp();
  bool mutableArray =
      isa_and_nonnull<LLVM::InlineAsmOp, NVVM::WgmmaMmaAsyncOp>(def) ||
      (isa<BlockArgument>(from) && isa<scf::ForOp>(from.getParentBlock()->getParentOp()));
  return mutableArray && isa<LLVM::LLVMStructType>(from.getType()) &&
         llvm::all_of(from.getUsers(),
                      [&](Operation *user) { return user == op || elided.count(user); });
}

/// A masked store (printed as kiln_store_if) to `base + (x + c)` elements,
/// its address read by nothing else: printed as `base + x` with c elements'
/// bytes as the store's immediate offset.
void KernelPrinter::planStoreOffsets() {
  // Index arithmetic such addresses fold away; printed only where something
  // printed still reads it (two stores of one index, c1's and c2's element
  // at the same offset, share its sum: neither prints it).
  SmallVector<Operation *> folded;
  func.walk([&](scf::IfOp op) {
    LLVM::StoreOp store = maskedGlobalStore(op);
    auto gep = store ? store.getAddr().getDefiningOp<LLVM::GEPOp>() : LLVM::GEPOp();
    if (!gep || !gep->hasOneUse() || gep.getIndices().size() != 1 ||
        !isa<Value>(gep.getIndices()[0]))
      return;
    // (An index cast to i64 moves no bits: index is 64 bits wide here.)
    Value index = cast<Value>(gep.getIndices()[0]);
    if (auto cast = index.getDefiningOp<arith::IndexCastOp>())
      index = cast.getIn();
    auto sum = index.getDefiningOp<arith::AddIOp>();
    if (!sum || !(sum.getType().isIndex() || sum.getType().isInteger(64)))
      return;
    for (unsigned i = 0; i < 2; ++i) {
      auto c = dyn_cast_or_null<IntegerAttr>(constantValue(sum->getOperand(i)));
      int64_t bytes = c ? c.getValue().getSExtValue() * byteSize(gep.getElemType()) : -1;
      if (bytes <= 0 || bytes >= (1 << 23))
        continue;
      storeOffsets[store] = {sum->getOperand(1 - i), bytes};
      // The address is not printed, nor the index's cast and sum where
      // nothing else reads them.
      elided.insert(gep);
      Operation *castOp = cast<Value>(gep.getIndices()[0]).getDefiningOp();
      if (castOp != sum)
        folded.push_back(castOp);
      folded.push_back(sum);
      return;
    }
  });
  // Casts before their sums: a sum is read by its casts.
  for (Operation *op : folded)
    if (llvm::all_of(op->getUsers(), [&](Operation *user) { return elided.count(user); }))
      elided.insert(op);
}

/// LLVM's NVPTX backend contracts an f32 product into the sum or difference
/// that reads it in the same block (FPOpFusion::Fast, and aggressively: a
/// product with other uses too; of two products, the one with fewer uses,
/// the first on a tie). nvcc contracts only a product read once. Each such
/// sum is printed as the fma the PTX build has, the same FFMA and the same
/// bits (a split scan's Vnew f and its bf16 parts were FMUL + FADD in the
/// nvcc build); a product all of whose uses are fused is not printed.
/// Products read once are left to nvcc, which contracts them as LLVM does
/// (fusing them here too gave the fused prefill scan 16 FFMA its PTX build
/// has not).
void KernelPrinter::planFusedProducts() {
  auto product = [](Operation *op, Value v) {
    auto m = v.getDefiningOp<arith::MulFOp>();
    return m && m->getBlock() == op->getBlock() && m.getType().isF32() ? m.getOperation() : nullptr;
  };
  auto uses = [](Operation *o) { return std::distance(o->use_begin(), o->use_end()); };
  llvm::DenseMap<Operation *, int64_t> fusedUses;
  func.walk([&](Operation *op) {
    if (!isa<arith::AddFOp, arith::SubFOp>(op) || !op->getResult(0).getType().isF32())
      return;
    Operation *x = product(op, op->getOperand(0)), *y = product(op, op->getOperand(1));
    Operation *m = x && (!y || uses(x) <= uses(y)) ? x : y;
    // A product read once nvcc contracts as LLVM does (left to it); one
    // product twice is left as it is.
    if (!m || (x && x == y) || uses(m) == 1)
      return;
    fusedProduct[op] = m;
    ++fusedUses[m];
  });
  for (auto [m, n] : fusedUses)
    if (n == uses(m))
      elided.insert(m);
}

void KernelPrinter::planInPlaceUpdates() {
  func.walk([&](LLVM::InlineAsmOp a) {
    auto type = a->getNumResults() ? dyn_cast<LLVM::LLVMStructType>(a->getResult(0).getType())
                                   : LLVM::LLVMStructType();
    if (!type)
      return;
    size_t numOut = type.getBody().size();
    SmallVector<StringRef> constraints;
    StringRef(a.getConstraints()).split(constraints, ',');
    if (constraints.size() != numOut + a->getNumOperands())
      return;
    // Every output k tied to member k of one struct, read nowhere else.
    Value from;
    SmallVector<Operation *> extracts;
    for (auto [i, v] : llvm::enumerate(a->getOperands())) {
      unsigned tiedTo;
      if (constraints[numOut + i].getAsInteger(10, tiedTo))
        continue;
      auto e = v.getDefiningOp<LLVM::ExtractValueOp>();
      if (!e || !v.hasOneUse() || e.getPosition().size() != 1 || e.getPosition()[0] != tiedTo ||
          (from && e.getContainer() != from))
        return;
      from = e.getContainer();
      extracts.push_back(e);
    }
    if (!from || extracts.size() != numOut || from.getType() != type)
      return;
    for (Operation *e : extracts)
      elided.insert(e);
    if (!updatesInPlace(from, a)) {
      for (Operation *e : extracts)
        elided.erase(e);
      return;
    }
    inPlaceAsm[a] = from;
  });
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

bool KernelPrinter::print(std::string &error) {
  errorOut = &error;
  auto fnType = func.getFunctionType();
  unsigned numArgs = fnType.getNumParams();
  bool named = params && params->names.size() == numArgs && params->types.size() == numArgs;
  // Signature: __launch_bounds__ from nvvm.maxntid, or, where the plan caps
  // registers (nvvm.maxnreg: setmaxnreg needs a cap to take effect),
  // __maxnreg__: nvcc takes one of the two, and the cap is the one that
  // shapes the code. The bounds ask for one CTA an SM at least, so that
  // ptxas may use every register the threads allow, as it does with the PTX
  // build's .maxntid alone: given the maximum only, it held nvcc's folded
  // chunk kernel to 168 registers and spilled, where the PTX build took 208
  // and none (bench/RESULTS.md, "2026-12-01, session 14").
  std::string bounds;
  int64_t threads = 0;
  if (auto ntid = func->getAttrOfType<DenseI32ArrayAttr>(NVVM::NVVMDialect::getMaxntidAttrName()))
    threads = (int64_t)ntid[0] * (ntid.size() > 1 ? ntid[1] : 1) * (ntid.size() > 2 ? ntid[2] : 1);
  if (auto nreg = func->getAttrOfType<IntegerAttr>(NVVM::NVVMDialect::getMaxnregAttrName())) {
    os << "// Launched with " << threads << " threads a CTA.\n";
    bounds = " __maxnreg__(" + std::to_string(nreg.getInt()) + ")";
  } else if (threads) {
    bounds = " __launch_bounds__(" + std::to_string(threads) + ", 1)";
  }
  if (auto layout = func->getAttrOfType<ArrayAttr>("kiln.shared_layout");
      layout && !layout.empty()) {
    os << "// Dynamic shared memory, as the plan laid it out (byte offsets):\n";
    for (Attribute line : layout)
      os << "//   " << cast<StringAttr>(line).getValue() << "\n";
  }
  os << "extern \"C\" __global__ void" << bounds << "\n" << func.getSymName() << "(";
  Block &entry = func.getBody().front();
  for (unsigned i = 0; i < numArgs; ++i) {
    BlockArgument arg = entry.getArgument(i);
    std::string name = named ? params->names[i] : "arg" + std::to_string(i);
    std::string type;
    bool tensorMap = (bool)func.getArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName());
    if (named) {
      type = params->types[i];
      // An input the kernel beside this one writes while it runs lost its
      // readonly in the lowering (tile.written_beside): not const here
      // either, or nvcc would read it through the read-only path.
      if (!tensorMap && isa<LLVM::LLVMPointerType>(arg.getType()) &&
          StringRef(type).starts_with("const ") &&
          !func.getArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName()))
        type = type.substr(6);
    } else if (tensorMap)
      type = "const __grid_constant__ CUtensorMap";
    else if (isa<LLVM::LLVMPointerType>(arg.getType()))
      type = func.getArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName())
                 ? "const char *__restrict__"
                 : "char *__restrict__";
    else
      type = typeOf(arg.getType());
    if (type.empty())
      return fail(func, "a kernel argument of this type");
    taken.insert(name);
    os << (i ? ",\n    " : "") << type << (type.back() == '*' ? "" : " ") << name;
    if (tensorMap) {
      helpers.tensorMaps = true;
      names[arg] = "((char *)&" + name + ")";
    } else if (isa<LLVM::LLVMPointerType>(arg.getType())) {
      names[arg] = "((char *)" + name + ")";
    } else {
      names[arg] = name;
    }
  }
  os << ") {\n";
  // The launch's ranges, which the PTX build's LLVM knows of the special
  // registers (or infers from the grid) and nvcc's front end otherwise does
  // not: bounds checks on a thread's rows then fold to uniform ones.
  if (threads)
    os << "  __builtin_assume(threadIdx.x < " << threads << "u);\n";
  if (auto extents = func->getAttrOfType<DenseI64ArrayAttr>(tile::kGridExtentsAttr))
    for (auto [axis, extent] : llvm::enumerate(extents.asArrayRef()))
      if (extent > 0)
        os << "  __builtin_assume(blockIdx."
           << "xyz"[axis] << " < " << extent << "u);\n";
  planInPlaceUpdates();
  planWordReads();
  planFusedProducts();
  planStoreOffsets();
  if (!printBlock(entry))
    return false;
  os << "}\n";
  return true;
}
