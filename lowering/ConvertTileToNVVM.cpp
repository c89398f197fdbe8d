//===- ConvertTileToNVVM.cpp - tile kernels to NVVM kernels ---------------===//
//
// The GPU path. Each tile.kernel becomes an llvm.func marked nvvm.kernel that
// one CTA runs per grid point. Every tile lives in registers, spread over the
// CTA's threads as its #tile.layout says (tile-assign-layouts chose it): a
// tile becomes the list of scalar SSA values this thread holds, so register
// arrays are never indexed at run time. Views become global pointers indexed
// row-major from the runtime dims; loads and stores along a contiguous dim
// move up to 16 bytes per access. Reductions combine a thread's registers,
// then lanes by butterfly shuffles, then warps through shared memory.
//
// Warp roles (KernelPlan): each role is one branch of an if/else over the
// warp index and lowers only the ops it runs. A load carried by a TMA
// pipeline becomes, in the role that issues it, a wait on the stage's empty
// mbarrier, an expect-tx arrive and a bulk tensor copy into the stage; in
// the roles that read it, a wait on the stage's full mbarrier, shared-memory
// loads into the tile's registers and an arrive on the empty mbarrier.
// `persistent` wraps each role's body in a loop over grid points.
//
//===----------------------------------------------------------------------===//
#include "dsl/TileDialect.h"
#include "dsl/schedule/Target.h"
#include "lowering/KernelPlan.h"
#include "lowering/KernelWalk.h"
#include "lowering/Layout.h"
#include "lowering/MmaTiling.h"
#include "lowering/Passes.h"
#include "lowering/ScalarCodegen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

namespace kiln {
#define GEN_PASS_DEF_CONVERTTILETONVVM
#include "lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

namespace {

using Regs = SmallVector<Value, 8>;
/// Per round and K step of a wgmma product, the A words of one thread.
using ARegisters = SmallVector<SmallVector<Value, 4>>;

/// A view argument: its global pointer, dims and row-major strides.
struct ViewInfo {
  Value ptr;
  SmallVector<Value> dims, strides;
  ViewType type;
  bool readOnly = false;
};

/// Which bounds of a masked access into a view a run-time test must check,
/// per view dim; the others hold at compile time.
struct WindowBounds {
  const ViewInfo &vi;
  ArrayRef<Value> starts, floors, limits;
  static std::optional<int64_t> constant(Value v) {
    if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
      return c.value();
    return std::nullopt;
  }
  /// [start, start + extent) provably lies inside static view dim vd.
  bool inside(unsigned vd, int64_t extent) const {
    std::optional<int64_t> s = constant(starts[vd]);
    return !vi.type.isDynamicDim(vd) && s && *s + extent <= vi.type.getShape()[vd];
  }
  /// A limit tighter than the view's own dim: it may end anywhere, even
  /// inside a vector.
  bool limitBinds(unsigned vd) const {
    if (limits.empty())
      return false;
    std::optional<int64_t> c = constant(limits[vd]);
    return !c || vi.type.isDynamicDim(vd) || *c < vi.type.getShape()[vd];
  }
  /// A floor other than 0: the window may start before a sub-view.
  bool floorBinds(unsigned vd) const {
    if (floors.empty())
      return false;
    std::optional<int64_t> c = constant(floors[vd]);
    return !c || *c > 0;
  }
};

class GpuKernelLowering {
public:
  GpuKernelLowering(KernelOp kernel, ModuleOp module, const KernelPlan &plan)
      : kernel(kernel), module(module), b(kernel), schedule(kernel.getScheduleAttr()), plan(plan) {}
  LogicalResult run();

private:
  KernelOp kernel;
  ModuleOp module;
  OpBuilder b;
  ScheduleAttr schedule;
  IRMapping map;                       // non-tile values to their copies
  DenseMap<Value, Regs> regs;          // tile values to this thread's registers
  DenseSet<Operation *> pairedSeconds; // dots lowered with the dot before them
  /// Ring loads whose stage a tensor-core product reads in place: the ring,
  /// the stage, and the address of the tile's rows there.
  struct RingOperand {
    const RingPlan *ring;
    Value stage, base;
  };
  DenseMap<Value, RingOperand> ringOperands;
  DenseMap<Value, ViewInfo> views;
  const KernelPlan &plan;
  unsigned role = 0; // the role being lowered
  Value tid;         // index of the thread in the CTA
  Value lane, warp;  // index; warp counts from the role's first warp
  unsigned scratchCount = 0;
  /// Per ring: its tensor map parameter and this thread's counts of copies
  /// issued and of stages read (i32 allocas; SROA keeps them in registers).
  SmallVector<Value> tensorMaps, issued, consumed;
  /// Per store ring: this thread's count of stages written (the writer)
  /// or copied out (the copier).
  SmallVector<Value> stagesWritten, stagesCopied;
  Value dynamicSmem; // ptr addrspace(3), base of the rings and mbarriers
  /// This thread's count of waits on its role's MMA mbarrier (tcgen05's
  /// commit, or an issuer's hand-overs; an i32 alloca), whose low bit is the
  /// phase parity to wait for.
  Value mmaWaits;
  bool hasIssuer() const {
    return llvm::any_of(plan.roles, [](const RolePlan &r) { return r.issuesMma; });
  }
  /// The CTA's tensor-memory address, read from where the allocation wrote
  /// it (a shared load where it is used rather than a register held
  /// through the kernel).
  Value tmemBase() {
    return LLVM::LoadOp::create(b, loc(), b.getI32Type(), smemAt(cIndex(plan.tmemSlotOffset)));
  }
  /// The tensor-memory address `columnAndLane` (lane in the high 16 bits)
  /// past the CTA's allocation; its start when null.
  Value tmemAt(Value columnAndLane = Value()) {
    Value at = tmemBase();
    if (columnAndLane)
      at = arith::AddIOp::create(b, loc(), at, columnAndLane);
    return LLVM::IntToPtrOp::create(b, loc(), LLVM::LLVMPointerType::get(b.getContext(), 6), at);
  }

  Location loc() { return kernel.getLoc(); }
  SmallVector<Value> mapped(ValueRange vs) {
    return llvm::map_to_vector(vs, [&](Value v) { return map.lookup(v); });
  }
  Value cIndex(int64_t v) { return arith::ConstantIndexOp::create(b, loc(), v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc(), x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc(), x, y); }
  Value eq(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, x, cIndex(v));
  }
  Value andOf(Value x, Value y) {
    return x ? arith::AndIOp::create(b, loc(), x, y).getResult() : y;
  }
  Value below(Value x, int64_t bound) {
    return arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, x, cIndex(bound));
  }
  /// Moves the builder into a new branch taken when `cond` holds; callers
  /// hold an InsertionGuard to come back out.
  void enterIf(Value cond) {
    auto branch = scf::IfOp::create(b, loc(), TypeRange{}, cond, false);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
  }
  /// Orders this thread's generic-proxy shared-memory writes before the
  /// async proxy's reads (tensor cores, bulk copies).
  void fenceAsyncProxy() {
    MLIRContext *ctx = b.getContext();
    NVVM::FenceProxyOp::create(b, loc(),
                               NVVM::ProxyKindAttr::get(ctx, NVVM::ProxyKind::async_shared),
                               NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  }
  /// This warpgroup's piece of `round` when `total` pieces are dealt to the
  /// role's `groups` warpgroups in turn; where the round runs out of pieces,
  /// the builder enters a branch the idle warpgroups skip (callers hold an
  /// InsertionGuard).
  Value warpgroupTurn(Value wg, int64_t round, int64_t groups, int64_t total) {
    Value piece = add(wg, cIndex(round * groups));
    if ((round + 1) * groups > total)
      enterIf(below(piece, total));
    return piece;
  }
  Value laneI32() { return arith::IndexCastOp::create(b, loc(), b.getI32Type(), lane); }
  /// The 32-bit `v` of lane `from` (an i32) of this warp.
  Value shuffleIndexed(Value v, Value from) {
    Type i32 = b.getI32Type();
    return NVVM::ShflOp::create(b, loc(), i32, LLVM::ConstantOp::create(b, loc(), i32, -1), v, from,
                                LLVM::ConstantOp::create(b, loc(), i32, 0x1f), NVVM::ShflKind::idx,
                                UnitAttr());
  }
  /// Moves the builder into a branch only the CTA's first warp takes.
  void enterFirstWarp() { enterIf(eq(arith::DivUIOp::create(b, loc(), tid, cIndex(32)), 0)); }
  void tcgen05Fence(NVVM::Tcgen05FenceKind kind) {
    NVVM::Tcgen05FenceOp::create(b, loc(), NVVM::Tcgen05FenceKindAttr::get(b.getContext(), kind));
  }
  /// Warps a tile layout spans: those of a computing role.
  int64_t numWarps() { return plan.layoutWarps; }
  Value cI32(int64_t v) { return arith::ConstantIntOp::create(b, loc(), v, 32); }
  bool runs(Operation *op) { return plan.roles[role].runs.contains(op); }
  /// The role whose staging area, tensor-memory columns and mbarriers the
  /// current role's products use: the served role's, for an issuer.
  const RolePlan &productRole() {
    const RolePlan &rp = plan.roles[role];
    return rp.issuesMma ? plan.roles[rp.serves] : rp;
  }
  /// Moves the builder into a new branch that only the role's first thread
  /// runs; callers hold an InsertionGuard to come back out.
  void enterLeaderOnly() {
    auto leader = scf::IfOp::create(b, loc(), TypeRange{}, andOf(eq(lane, 0), eq(warp, 0)), false);
    b.setInsertionPoint(leader.thenBlock()->getTerminator());
  }
  /// Synchronises the threads of the current role.
  void syncRole();
  /// Address `bytes` into dynamic shared memory.
  Value smemAt(Value byteOffset);
  /// Shared memory `bytes` into stage `stage` of `ring`.
  Value ringStage(const RingStages &ring, Value stage, int64_t bytes = 0);
  Value ringBarrier(const RingStages &ring, Value index);
  /// The empty mbarrier of stage `stage` (the full one is ringBarrier(stage)).
  Value emptyBarrier(const RingStages &ring, Value stage) {
    return ringBarrier(ring, add(stage, cIndex(ring.depth)));
  }
  /// Stage and phase parity of the next use of a ring by this thread, from
  /// the counter at `counter`.
  std::pair<Value, Value> ringPosition(const RingStages &ring, Value counter);
  void bumpCounter(Value counter);
  void waitBarrier(Value barrier, Value parity);
  LogicalResult lowerRingLoad(const RingPlan &ring, LoadOp load);
  /// A store handed to another role: its writer fills a stage, its copier
  /// copies the stage out row by row.
  LogicalResult lowerRingStore(const StoreRingPlan &ring, StoreOp store);
  /// The copier's part: bulk copies of whole rows inside the store's limits
  /// (plain stores where a row is cut or misaligned).
  void copyStageOut(StoreOp store, Value stage);
  /// A view of a ring stage holding `tile`'s elements dense and row-major.
  ViewInfo denseStage(Value base, TileType tile);
  /// Allocates tensor memory and initialises the rings' and roles'
  /// mbarriers, then synchronises the CTA.
  void initShared();
  /// Frees the tensor memory once every thread is done.
  void freeTensorMemory();
  /// Lowers role r's branch; with `setRegs`, it starts with the role's
  /// setmaxnreg (roles sharing a warpgroup take theirs before they split).
  LogicalResult lowerRole(unsigned r, Block &body, const IRMapping &entryMap, bool setRegs);
  void setRoleRegisters(const RolePlan &rp);

  /// Layout of a tile value (from its op, or for loop-carried values, from
  /// the value that initialises them).
  TileLayout layoutOf(Value v);
  Value laneCoord(const TileLayout &l, unsigned p);
  Value warpCoord(const TileLayout &l, unsigned p);
  /// This thread's first element along tile dim d.
  Value threadBase(const TileLayout &l, unsigned d);
  /// True in the one thread of each group holding copies of the same
  /// elements; null when no thread holds a copy.
  Value ownerPredicate(const TileLayout &l);

  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerProgramIds(ProgramIdsOp op);
  /// A load into `tile` or a store of it; the tile's shape is the window's
  /// `keep` dims.
  LogicalResult lowerAccess(const ViewInfo &vi, ArrayRef<Value> starts, ArrayRef<Value> floors,
                            ArrayRef<Value> limits, ArrayRef<int64_t> keep, bool masked, Value tile,
                            bool isLoad, double other);
  LogicalResult lowerReduce(ReduceOp op);

  // Moving tiles through the role's staging area in shared memory.
  /// This thread's first element along every tile dim (threadBase of each).
  SmallVector<Value> threadBases(const TileLayout &l);
  /// This thread's coordinate of register r along every tile dim.
  SmallVector<Value> regCoords(const TileLayout &l, ArrayRef<Value> bases, int64_t r);
  /// Element `linear` of an `elem` array at the shared-memory address `base`.
  Value sharedElem(Value base, Type elem, Value linear);
  /// Writes `tile` row-major at `base` (each element by one thread).
  void stageOut(Value tile, Value base);
  /// Writes `convert` of each element of `tile` at `address` of its
  /// coordinates (each element by one thread).
  void stageOutWith(Value tile, function_ref<Value(Value)> convert,
                    function_ref<Value(ArrayRef<Value>)> address);
  /// Reads this thread's registers of layout `l` from `base`; `linear` maps
  /// a register's coordinates to the row-major index it reads.
  Regs stageIn(const TileLayout &l, Type elem, Value base,
               function_ref<Value(ArrayRef<Value>)> linear);
  Value stagingBase(int64_t extraBytes = 0);
  Value rowMajor(ArrayRef<Value> coords, ArrayRef<int64_t> shape);
  LogicalResult lowerDot(DotOp op);
  /// The result's registers of a transpose whose result layout is its
  /// input's with the dims permuted alike (tile-assign-layouts makes that
  /// so around accumulator fragments): the input's registers renumbered,
  /// nothing moved. None for any other pair of layouts.
  std::optional<Regs> transposedInRegisters(TransposeOp tr);
  /// A dot on tensor cores: both operands staged in shared memory, the
  /// products issued as `t.kind` says, the result read back through the
  /// staging area's f32 rows.
  LogicalResult lowerTensorCoreDot(DotOp op, MmaTiling::Kind kind);
  /// Where a product reads an operand: its staged (or ring) rows, and
  /// whether swizzled.
  struct OperandAt {
    Value base;
    bool swizzled;
    bool nMajor = false; // a B staged N-major (MmaTiling::nMajorSwizzleBytes)
  };
  /// A tensor-core product as the current role runs it: its tiling, the dot
  /// it pairs with (whose other operand is stacked below the first's), and
  /// where each operand is read: a TMA ring stage or the staging area,
  /// swizzled or not.
  struct Product {
    MmaTiling t;
    std::optional<DotPair> pair;
    Value extra; // the pair's other operand
    const RingOperand *aRing = nullptr, *bRing = nullptr, *extraRing = nullptr;
    bool aSwizzled = false, bSwizzled = false;
    bool bNMajor = false;
  };
  /// Plans `op`'s product on `warps` warps; the error is reported at `op`.
  FailureOr<Product> planProduct(DotOp op, MmaTiling::Kind kind, int64_t warps);
  /// Where the product's descriptors point: its ring stages, or the product
  /// role's staging area.
  std::pair<OperandAt, OperandAt> operandsAt(const Product &p) {
    return {{p.aRing ? p.aRing->base : stagingBase(p.t.aOffset), p.aSwizzled},
            {p.bRing ? p.bRing->base : stagingBase(p.t.bOffset), p.bSwizzled, p.bNMajor}};
  }
  /// Whether `op`'s B is staged N-major: wgmma reads a 16-bit B laid out [K,
  /// N] as it lies (the transpose bit), so its threads store their runs
  /// along N whole instead of gathering K. Not for a B stacked beside
  /// another, from a ring, or kept resident.
  bool stagesBNMajor(DotOp op, const Product &p);
  /// The shared-memory descriptor of an operand starting `offset` bytes
  /// after `at.base`.
  Value operandDescriptor(const MmaTiling &t, OperandAt at, Value offset, int64_t rows);
  /// wgmma: each warpgroup runs its items and writes their fragments to the
  /// result rows at t.dOffset of the staging area.
  /// Issues the items of a wgmma product planned as `t`, each warpgroup its
  /// turns, and writes the results to the f32 rows at t.dOffset; or, given
  /// `fragment` (a resident's registers), accumulates onto it and writes
  /// nothing.
  /// With `results` (a product whose result tile has t.fragmentLayout()),
  /// leaves each accumulator in the result's registers instead.
  void issueWgmma(const MmaTiling &t, OperandAt a, OperandAt b, Regs *fragment = nullptr,
                  Regs *results = nullptr, const ARegisters *aRegs = nullptr);
  /// wgmma with A from registers: the four 32-bit words of this thread's A
  /// fragment for each round and K step (round * K steps + step), where the
  /// dot's lhs is held as wgmma reads it: the result of a product in its
  /// fragment layout (through elementwise ops), or a cast of a resident kept
  /// in registers. The warpgroups must hold exactly the 64-row tiles they
  /// multiply. None otherwise: then A is staged.
  std::optional<ARegisters> registerOperandA(DotOp op, const MmaTiling &t);
  /// One wgmma with A from `a` (inline PTX: MLIR's op reads A from shared
  /// memory only), B at descriptor `bDesc`, onto `acc` (scaled by 0 when
  /// `zero`).
  Value wgmmaRegisterA(const MmaTiling &t, Value acc, ArrayRef<Value> a, Value bDesc, bool zero,
                       bool bNMajor);
  /// Visits the accumulator pairs of item (mTile, nPart) of a wgmma product
  /// planned as `t` that this thread holds: `visit(reg, row, col)` gets the
  /// first of the pair's two registers in the item's fragment, its result
  /// row and its first column.
  void forEachFragmentPair(const MmaTiling &t, Value mTile, Value nPart,
                           function_ref<void(int64_t reg, Value row, Value col)> visit);
  /// Stores the accumulator pair (x0, x1) at (row, col) of a wgmma product
  /// planned as `t` to its f32 result rows at `dBase`, unless the pair lies
  /// past the result (rows padding M to 64, columns past N).
  void storeFragmentPair(const MmaTiling &t, Value dBase, Value row, Value col, Value x0, Value x1);
  /// A resident kept in registers: visits the items its warpgroup holds
  /// (as forEachFragmentPair), `reg` counting over all of them.
  void forEachResidentPair(const MmaTiling &t,
                           function_ref<void(int64_t reg, Value row, Value col)> visit);
  /// tcgen05: the role's first thread issues every item into the role's
  /// tensor-memory columns and commits to the role's mbarrier; the role
  /// waits on it and its warpgroups copy the columns to the result rows.
  void issueTcgen05(const MmaTiling &t, OperandAt a, OperandAt b, const ResidentPlan *onto,
                    ArrayRef<const RingOperand *> freed);
  /// tcgen05 from the current thread: every item into the product role's
  /// columns (accumulating onto `onto`'s, when given), then a commit that
  /// arrives on `done` and one on the empty mbarrier of each ring stage in
  /// `freed` (read in place: the products' completion frees it).
  void issueTcgen05Items(const MmaTiling &t, OperandAt a, OperandAt b, Value done,
                         const ResidentPlan *onto, ArrayRef<const RingOperand *> freed);
  /// The ring stages a product reads in place (null where an operand is staged).
  static SmallVector<const RingOperand *, 3> ringStagesOf(const Product &p) {
    SmallVector<const RingOperand *, 3> out;
    for (const RingOperand *r : {p.aRing, p.bRing, p.extraRing})
      if (r)
        out.push_back(r);
    return out;
  }
  /// Waits for the next phase of `barrier`, counting this thread's waits.
  void waitCounted(Value barrier);
  /// tcgen05: the role's warpgroups copy the product's columns to the
  /// result rows at t.dOffset of the staging area.
  void readTensorMemory(const MmaTiling &t) {
    copyColumnsToRows(t, productRole().tmemColumnOffset);
  }
  /// Visits each block of t.loadColumns columns of an accumulator planned as
  /// `t` at tensor-memory column `columnBase` that this thread's warpgroup
  /// takes: `visit(at, row, col0, inside)` gets the block's address in this
  /// warp's lanes, the tile row this lane reaches there, the block's first
  /// tile column, and whether that row is one of the tile's (null: always).
  /// The whole warp runs `visit` (tcgen05.ld and st are warp-wide).
  void forEachColumnBlock(const MmaTiling &t, int64_t columnBase,
                          function_ref<void(Value at, Value row, Value col0, Value inside)> visit);
  /// tcgen05.ld of `n` 32-bit columns at `at`, returned once they have
  /// arrived (tcgen05.wait::ld).
  SmallVector<Value> loadColumns(Value at, int64_t n);
  /// tcgen05.st of the 32-bit `words` (a vector) to the columns at `at`.
  void storeColumns(Value at, Value words) {
    NVVM::Tcgen05StOp::create(
        b, loc(), UnitAttr(),
        NVVM::Tcgen05LdStShapeAttr::get(b.getContext(), NVVM::Tcgen05LdStShape::SHAPE_32X32B), at,
        words, Value());
  }
  /// Copies the accumulator at `columnBase` to the result rows at t.dOffset.
  void copyColumnsToRows(const MmaTiling &t, int64_t columnBase);
  // A resident tile (KernelPlan's ResidentPlan) lives where its update
  // product accumulates, in that product's layout: tensor-memory columns,
  // or the wgmma fragment in `fragments`.
  MmaTiling residentTiling(const ResidentPlan &res);
  DenseMap<const ResidentPlan *, Regs> fragments;
  /// Writes `tile` (in registers) to the resident's columns, through the
  /// result rows of the staging area.
  void writeResident(const ResidentPlan &res, Value tile);
  /// Reads the resident's columns into `result`'s registers.
  void readResident(const ResidentPlan &res, Value result);
  /// Multiplies the resident's columns by `factor` where they are.
  void scaleResident(const ResidentPlan &res, Value factor);
  /// Stages a copy of the resident cast to `copyElem` (the operand of a
  /// product planned as `t`) straight from its columns: each lane converts
  /// its row's columns and stores them K-major at `region`, rows from
  /// `rowOffset`.
  void stageResidentOperand(const ResidentPlan &res, Type copyElem, bool isLhs, const MmaTiling &t,
                            int64_t region, bool swizzled, int64_t rowOffset);
  /// The resident `op` (a dot) accumulates onto, or null.
  const ResidentPlan *accumulatesOnto(Operation *op) {
    const ResidentPlan *res = plan.residentTouchedBy(op);
    return res && res->update == op ? res : nullptr;
  }
  /// Byte offset of element (row, k) of an operand staged K-major for `t`
  /// with `rows` rows, from its region's start.
  Value operandByteOffset(const MmaTiling &t, bool swizzled, int64_t rows, Value row, Value k,
                          bool nMajor = false);
  /// In a role that an issuer serves: hands the staged product over and
  /// waits until it is done (its result in tensor memory or, for wgmma, in
  /// the result rows).
  void handOffProduct(const MmaTiling &t, bool readBack = true);
  /// In an issuing role: waits for the served role's operands, then issues
  /// the product (of `op`, or the pair it starts) and signals it done.
  LogicalResult issueServedProduct(DotOp op, MmaTiling::Kind kind);
  /// A tensor-core operand as staged: the tile whose registers are written (a
  /// folded transpose's input), whether its last dim is K, its layout, and
  /// the elements of K a thread writes at once.
  struct StagedOperand {
    Value tile;
    bool kLast;
    bool nMajor; // a B staged N-major: its rows are K's
    TileLayout l;
    int64_t vec;
    /// Whether the staged rows run along the tile's last dim (K, or N for
    /// an N-major B): then dim 0 indexes the staged rows.
    bool rowsAlongLast() const { return kLast || nMajor; }
  };
  StagedOperand stagedOperand(Value operand, bool isLhs, const MmaTiling &t, bool nMajor = false);
  /// The `vec` registers of `x` (layout `l`) from register index `ri` on
  /// along the tile's last dim, each cast to `elem`, as one vector.
  Value packRun(const TileLayout &l, const Regs &x, ArrayRef<int64_t> ri, int64_t vec, Type elem) {
    Value v = LLVM::UndefOp::create(b, loc(), VectorType::get({vec}, elem));
    SmallVector<int64_t, 2> rj(ri);
    for (int64_t j = 0; j < vec; ++j, ++rj.back())
      v = LLVM::InsertElementOp::create(b, loc(), v, scalarCast(b, loc(), x[l.regNumber(rj)], elem),
                                        cI32(j));
    return v;
  }
  /// The element type a product's operands are staged as: tf32 operands are
  /// f32 bits (the tensor cores read the top 19), others as they are.
  Type stagedOperandType(const MmaTiling &t) {
    using Operands = MmaTiling::Operands;
    return t.operands == Operands::TF32   ? (Type)b.getF32Type()
           : t.operands == Operands::BF16 ? b.getBF16Type()
                                          : b.getF16Type();
  }
  /// Whether the swizzled layout saves bank conflicts staging `operand`.
  bool swizzlePays(Value operand, bool isLhs, const MmaTiling &t, bool nMajor = false);
  /// Stages a tensor-core operand (the dot's lhs when `isLhs`) K-major at `region`
  /// of the staging area, its first row at staged row `rowOffset` (a
  /// multiple of 8).
  void stageMmaOperand(Value operand, bool isLhs, const MmaTiling &t, int64_t region, bool swizzled,
                       int64_t rowOffset = 0, bool nMajor = false);
  /// Stages an MN-major operand (K its tile's first dim) in two steps, when
  /// it is large enough to pay and its tile fits the result rows area:
  /// row-major there with vector stores, then each thread gathers 16 bytes
  /// of K of one staged row and stores them whole. Storing it directly puts
  /// one element a lane into rows 16 bytes x 4 apart, 16 lanes on one bank.
  /// False when it does not apply.
  bool stageByPieces(const StagedOperand &o, bool isLhs, const MmaTiling &t, int64_t region,
                     bool swizzled, int64_t rowOffset);
  /// A staging by pieces wrote the result rows area and its gathers may
  /// still be reading it: the next one waits for the role first.
  bool piecesPending = false;
  LogicalResult lowerCumsum(CumsumOp op);
  /// A fresh shared-memory array of `count` elements; returns its address.
  Value scratchBuffer(Type elem, int64_t count);
};

TileLayout GpuKernelLowering::layoutOf(Value v) {
  auto shape = cast<TileType>(v.getType()).getShape();
  Operation *def = v.getDefiningOp();
  if (def)
    if (auto attr = def->getAttrOfType<LayoutAttr>(kLayoutAttr))
      return TileLayout::get(attr, shape);
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
      return layoutOf(forOp.getInitArgs()[arg.getArgNumber() - 1]);
  if (auto res = dyn_cast<OpResult>(v))
    if (auto forOp = dyn_cast<scf::ForOp>(res.getOwner()))
      return layoutOf(forOp.getInitArgs()[res.getResultNumber()]);
  llvm_unreachable("tile without a layout: run tile-assign-layouts first");
}

Value GpuKernelLowering::laneCoord(const TileLayout &l, unsigned p) {
  if (l.lanes[p] == 1)
    return cIndex(0);
  Value q = arith::DivUIOp::create(b, loc(), lane, cIndex(l.laneStride(p)));
  return arith::RemUIOp::create(b, loc(), q, cIndex(l.lanes[p]));
}

Value GpuKernelLowering::warpCoord(const TileLayout &l, unsigned p) {
  if (l.warps[p] == 1)
    return cIndex(0);
  Value q = arith::DivUIOp::create(b, loc(), warp, cIndex(l.warpStride(p)));
  return arith::RemUIOp::create(b, loc(), q, cIndex(l.warps[p]));
}

Value GpuKernelLowering::threadBase(const TileLayout &l, unsigned d) {
  if (l.isUnit(d))
    return cIndex(0);
  unsigned p = l.dims[d];
  return add(mul(laneCoord(l, p), cIndex(l.laneStep(p))),
             mul(warpCoord(l, p), cIndex(l.size[p] * l.lanes[p])));
}

Value GpuKernelLowering::ownerPredicate(const TileLayout &l) {
  Value pred;
  if (l.laneCount() < 32)
    pred = andOf(pred, arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, lane,
                                             cIndex(l.laneCount())));
  if (l.warpCount() < numWarps())
    pred = andOf(pred, arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, warp,
                                             cIndex(l.warpCount())));
  for (unsigned p : l.replicatedParentDims()) {
    if (l.lanes[p] > 1)
      pred = andOf(pred, eq(laneCoord(l, p), 0));
    if (l.warps[p] > 1)
      pred = andOf(pred, eq(warpCoord(l, p), 0));
  }
  return pred;
}

SmallVector<Value> GpuKernelLowering::threadBases(const TileLayout &l) {
  SmallVector<Value> bases;
  for (unsigned d = 0; d < l.shape.size(); ++d)
    bases.push_back(threadBase(l, d));
  return bases;
}

Value GpuKernelLowering::sharedElem(Value base, Type elem, Value linear) {
  Value off = arith::IndexCastOp::create(b, loc(), b.getI64Type(), linear);
  return LLVM::GEPOp::create(b, loc(), base.getType(), elem, base, ValueRange{off});
}

SmallVector<Value> GpuKernelLowering::regCoords(const TileLayout &l, ArrayRef<Value> bases,
                                                int64_t r) {
  SmallVector<int64_t, 2> ri = l.regIndex(r);
  SmallVector<Value> c;
  for (unsigned d = 0; d < l.shape.size(); ++d)
    c.push_back(add(bases[d], cIndex(l.constOffset(d, ri[d]))));
  return c;
}

Value GpuKernelLowering::rowMajor(ArrayRef<Value> coords, ArrayRef<int64_t> shape) {
  Value linear = cIndex(0);
  for (unsigned d = 0; d < shape.size(); ++d)
    linear = add(mul(linear, cIndex(shape[d])), coords[d]);
  return linear;
}

Value GpuKernelLowering::stagingBase(int64_t extraBytes) {
  return smemAt(cIndex(productRole().stagingOffset + extraBytes));
}

/// Shared memory holds bools as bytes.
static Type stagedType(OpBuilder &b, Type elem) {
  return elem.isInteger(1) ? (Type)b.getI8Type() : elem;
}

void GpuKernelLowering::stageOut(Value tile, Value base) {
  auto type = cast<TileType>(tile.getType());
  Type elem = type.getElementType(), stored = stagedType(b, elem);
  stageOutWith(
      tile,
      [&](Value v) {
        return stored == elem ? v : arith::ExtUIOp::create(b, loc(), stored, v).getResult();
      },
      [&](ArrayRef<Value> c) { return sharedElem(base, stored, rowMajor(c, type.getShape())); });
}

void GpuKernelLowering::stageOutWith(Value tile, function_ref<Value(Value)> convert,
                                     function_ref<Value(ArrayRef<Value>)> address) {
  TileLayout l = layoutOf(tile);
  OpBuilder::InsertionGuard guard(b);
  if (Value owner = ownerPredicate(l)) {
    auto only = scf::IfOp::create(b, loc(), TypeRange{}, owner, false);
    b.setInsertionPoint(only.thenBlock()->getTerminator());
  }
  SmallVector<Value> bases = threadBases(l);
  const Regs &x = regs[tile];
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    Value v = convert(x[r]);
    LLVM::StoreOp::create(b, loc(), v, address(regCoords(l, bases, r)));
  }
}

Regs GpuKernelLowering::stageIn(const TileLayout &l, Type elem, Value base,
                                function_ref<Value(ArrayRef<Value>)> linear) {
  Type stored = stagedType(b, elem);
  SmallVector<Value> bases = threadBases(l);
  Regs out(l.numRegs());
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    Value v = LLVM::LoadOp::create(b, loc(), stored,
                                   sharedElem(base, stored, linear(regCoords(l, bases, r))));
    out[r] = stored == elem ? v : arith::TruncIOp::create(b, loc(), elem, v).getResult();
  }
  return out;
}

LogicalResult GpuKernelLowering::lowerCumsum(CumsumOp op) {
  // Each element sums its prefix from shared memory: O(n) per element, for
  // the short scans (a chunk's decays) it serves.
  auto type = op.getType();
  ArrayRef<int64_t> shape = type.getShape();
  unsigned axis = op.getAxis();
  Value base = stagingBase();
  stageOut(op.getInput(), base);
  syncRole();
  TileLayout l = layoutOf(op.getResult());
  Type elem = type.getElementType();
  SmallVector<Value> bases = threadBases(l);
  Regs out(l.numRegs());
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = regCoords(l, bases, r);
    Value upper = add(c[axis], cIndex(1));
    auto loop = scf::ForOp::create(b, loc(), cIndex(0), upper, cIndex(1),
                                   ValueRange{scalarConstant(b, loc(), elem, 0.0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> src(c);
      src[axis] = loop.getInductionVar();
      Value v = LLVM::LoadOp::create(b, loc(), elem, sharedElem(base, elem, rowMajor(src, shape)));
      Value acc = loop.getRegionIterArgs()[0];
      Value sum = isa<FloatType>(elem) ? arith::AddFOp::create(b, loc(), acc, v).getResult()
                                       : arith::AddIOp::create(b, loc(), acc, v).getResult();
      scf::YieldOp::create(b, loc(), ValueRange{sum});
    }
    out[r] = loop.getResult(0);
  }
  regs[op.getResult()] = out;
  syncRole();
  return success();
}

LogicalResult GpuKernelLowering::lowerDot(DotOp op) {
  StringRef mma = schedule.getMma();
  if (std::optional<MmaTiling::Kind> kind = MmaTiling::kindOf(mma))
    return lowerTensorCoreDot(op, *kind);
  if (mma != "none" && mma != "simt")
    return op.emitOpError("needs the schedule's matrix instruction '")
           << mma << "', which is not lowered yet; 'mma: simt' lowers dot on CUDA cores";
  // The SIMT product: both operands staged row-major in shared memory, each
  // thread accumulates its own result elements over the inner dim.
  auto lhsType = op.getLhs().getType(), rhsType = op.getRhs().getType();
  int64_t K = lhsType.getShape()[1], N = rhsType.getShape()[1];
  int64_t lhsBytes =
      lhsType.getNumElements() * lhsType.getElementType().getIntOrFloatBitWidth() / 8;
  Value aBase = stagingBase(), bBase = stagingBase(llvm::alignTo(lhsBytes, 16));
  stageOut(op.getLhs(), aBase);
  stageOut(op.getRhs(), bBase);
  syncRole();
  TileLayout l = layoutOf(op.getResult());
  Type f32 = b.getF32Type();
  Value row = threadBase(l, 0), col = threadBase(l, 1);
  Regs init(l.numRegs());
  for (int64_t r = 0; r < l.numRegs(); ++r)
    init[r] = op.getAcc() ? regs[op.getAcc()][r] : scalarConstant(b, loc(), f32, 0.0);
  auto loop = scf::ForOp::create(b, loc(), cIndex(0), cIndex(K), cIndex(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    auto operand = [&](Value base, Type elem, Value linear) -> Value {
      return scalarCast(b, loc(),
                        LLVM::LoadOp::create(b, loc(), elem, sharedElem(base, elem, linear)), f32);
    };
    // One load per distinct row of A and column of B this thread touches.
    DenseMap<int64_t, Value> aRows, bCols;
    Regs next(l.numRegs());
    for (int64_t r = 0; r < l.numRegs(); ++r) {
      SmallVector<int64_t, 2> ri = l.regIndex(r);
      int64_t i = l.constOffset(0, ri[0]), j = l.constOffset(1, ri[1]);
      Value &a = aRows[i];
      if (!a)
        a = operand(aBase, lhsType.getElementType(), add(mul(add(row, cIndex(i)), cIndex(K)), k));
      Value &bv = bCols[j];
      if (!bv)
        bv = operand(bBase, rhsType.getElementType(), add(mul(k, cIndex(N)), add(col, cIndex(j))));
      next[r] = LLVM::FMAOp::create(b, loc(), a, bv, loop.getRegionIterArgs()[r]);
    }
    scf::YieldOp::create(b, loc(), next);
  }
  regs[op.getResult()] = Regs(loop.getResults().begin(), loop.getResults().end());
  syncRole();
  return success();
}

/// A transpose whose only users are dots on tensor cores: the dots stage
/// its input directly (a K-major operand is the transposed one's rows).
static bool foldedIntoTensorCoreDots(TransposeOp tr, ScheduleAttr schedule) {
  return MmaTiling::kindOf(schedule.getMma()) && foldsIntoDots(tr);
}

GpuKernelLowering::StagedOperand GpuKernelLowering::stagedOperand(Value operand, bool isLhs,
                                                                  const MmaTiling &t, bool nMajor) {
  // A transpose folded into the dot is staged from its input.
  auto [tile, transposed] = stagedTile(operand);
  StagedOperand o{tile, false, nMajor, {}, 1};
  // Whether the staged tile's last dim is K: then a thread's consecutive
  // registers along it fill one 16-byte piece of a row with a vector store
  // (so do they along N, for a B staged N-major).
  o.kLast = isLhs != transposed;
  o.l = layoutOf(o.tile);
  unsigned last = o.l.shape.size() - 1;
  if (o.rowsAlongLast() && !o.l.isUnit(last))
    o.vec = std::gcd(o.l.contiguous(last), t.perCore());
  return o;
}

bool GpuKernelLowering::swizzlePays(Value operand, bool isLhs, const MmaTiling &t, bool nMajor) {
  StagedOperand o = stagedOperand(operand, isLhs, t, nMajor);
  if (nMajor && !t.nMajorSwizzleBytes)
    return false;
  // A warp stores 16 bytes a lane in phases of 8 lanes; the plain layout
  // keeps them in 8 bank groups only when those lanes are 8 rows.
  unsigned rowDim = o.rowsAlongLast() ? 0 : 1, rowParent = o.l.dims[rowDim];
  bool rowsPerPhase =
      !o.l.isUnit(rowDim) && o.l.laneStride(rowParent) == 1 && o.l.lanes[rowParent] >= 8;
  return o.vec > 1 && !rowsPerPhase && schedule.getSwizzle();
}

void GpuKernelLowering::stageMmaOperand(Value operand, bool isLhs, const MmaTiling &t,
                                        int64_t region, bool swizzled, int64_t rowOffset,
                                        bool nMajor) {
  // Staged K-major: element (row, k) at t.operandOffset(row, k, ...), where
  // row is A's m or B's n; N-major, row is B's k and k its n.
  StagedOperand o = stagedOperand(operand, isLhs, t, nMajor);
  if (Operation *def = o.tile.getDefiningOp())
    if (const ResidentPlan *res = plan.residentTouchedBy(def))
      return stageResidentOperand(*res, cast<TileType>(o.tile.getType()).getElementType(), isLhs, t,
                                  region, swizzled, rowOffset);
  if (stageByPieces(o, isLhs, t, region, swizzled, rowOffset))
    return;
  Value tile = o.tile;
  const TileLayout &l = o.l;
  int64_t vec = o.vec;
  Type stored = stagedOperandType(t);
  unsigned last = l.shape.size() - 1, rowDim = o.rowsAlongLast() ? 0 : 1,
           kDim = o.rowsAlongLast() ? 1 : 0;
  int64_t rows = nMajor ? t.K : isLhs ? t.rowsA : t.rowsB;
  int64_t block = t.blockBytes(swizzled, nMajor);

  OpBuilder::InsertionGuard guard(b);
  if (Value owner = ownerPredicate(l)) {
    auto only = scf::IfOp::create(b, loc(), TypeRange{}, owner, false);
    b.setInsertionPoint(only.thenBlock()->getTerminator());
  }
  SmallVector<Value> bases = threadBases(l);
  Value areaStart = cIndex(plan.roles[role].stagingOffset + region);
  // A register's constant rows and K bytes add to the thread's own offset
  // when they keep its permutation (whole 8-row atoms) and its byte in the
  // row (whole K blocks); other registers compute theirs.
  Value rowBase = add(bases[rowDim], cIndex(rowOffset)), kBase = bases[kDim];
  Value threadStart = add(areaStart, operandByteOffset(t, swizzled, rows, rowBase, kBase, nMajor));
  const Regs &x = regs[tile];
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<int64_t, 2> ri = l.regIndex(r);
    if (ri[last] % vec)
      continue; // stored with the run it belongs to
    int64_t rowC = l.constOffset(rowDim, ri[rowDim]), kC = l.constOffset(kDim, ri[kDim]);
    bool samePermutation = !swizzled || rowC * block % MmaTiling::kAtomAlignment == 0;
    Value addr;
    if (samePermutation && kC * t.elemBytes % block == 0) {
      addr = smemAt(add(threadStart, cIndex(t.linearOffset(rowC, kC, rows, swizzled, nMajor))));
    } else {
      addr = smemAt(add(areaStart, operandByteOffset(t, swizzled, rows, add(rowBase, cIndex(rowC)),
                                                     add(kBase, cIndex(kC)), nMajor)));
    }
    if (vec == 1) {
      LLVM::StoreOp::create(b, loc(), scalarCast(b, loc(), x[r], stored), addr);
      continue;
    }
    LLVM::StoreOp::create(b, loc(), packRun(l, x, ri, vec, stored), addr, vec * t.elemBytes);
  }
}

bool GpuKernelLowering::stageByPieces(const StagedOperand &o, bool isLhs, const MmaTiling &t,
                                      int64_t region, bool swizzled, int64_t rowOffset) {
  const TileLayout &l = o.l;
  auto type = cast<TileType>(o.tile.getType());
  // A tile of a few elements a thread keeps the direct stores: for a
  // handful of them the gather's barrier would sit on a latency-bound path
  // (the scan's Vnew^T).
  if (!schedule.getGatherMnMajor() || o.rowsAlongLast() || type.getRank() != 2 || l.numRegs() < 8)
    return false;
  Type elem = type.getElementType();
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8,
          perVector = 16 / std::max<int64_t>(1, elemBytes);
  int64_t K = type.getShape()[0], R = type.getShape()[1], perPiece = t.perCore();
  int64_t pitch = R + perVector; // padded, and rows stay 16-byte aligned
  if (elemBytes < 2 || R % perVector || K % perPiece || K * pitch * elemBytes > t.M * t.dStride * 4)
    return false;
  Type stored = stagedOperandType(t);
  if (piecesPending)
    syncRole();
  Value scratch = stagingBase(t.dOffset);
  {
    // The tile row-major, up to 16 bytes a store along its rows.
    OpBuilder::InsertionGuard guard(b);
    if (Value owner = ownerPredicate(l))
      enterIf(owner);
    int64_t vec = 1;
    if (!l.isUnit(1)) {
      vec = std::min<int64_t>(l.contiguous(1), perVector);
      while (vec > 1 && R % vec)
        vec /= 2;
    }
    SmallVector<Value> bases = threadBases(l);
    const Regs &x = regs[o.tile];
    for (int64_t r = 0; r < l.numRegs(); ++r) {
      SmallVector<int64_t, 2> ri = l.regIndex(r);
      if (ri[1] % vec)
        continue;
      SmallVector<Value> c = regCoords(l, bases, r);
      Value at = sharedElem(scratch, elem, add(mul(c[0], cIndex(pitch)), c[1]));
      if (vec == 1) {
        LLVM::StoreOp::create(b, loc(), x[r], at);
        continue;
      }
      LLVM::StoreOp::create(b, loc(), packRun(l, x, ri, vec, elem), at, vec * elemBytes);
    }
  }
  syncRole();
  // Pieces: 16 bytes of K of one staged row each, consecutive threads on
  // consecutive rows (so neither the gathers nor the stores conflict).
  int64_t threads = plan.roles[role].numWarps * 32, pieces = R * (K / perPiece);
  Value thread = add(mul(warp, cIndex(32)), lane);
  Value areaStart = cIndex(plan.roles[role].stagingOffset + region);
  int64_t rows = isLhs ? t.rowsA : t.rowsB;
  auto pieceType = VectorType::get({perPiece}, stored);
  // A loop, not unrolled rounds: the gathers' addresses would hold
  // registers the operand's role may not have.
  auto rounds =
      scf::ForOp::create(b, loc(), cIndex(0), cIndex((pieces + threads - 1) / threads), cIndex(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(rounds.getBody()->getTerminator());
    Value piece = add(thread, mul(rounds.getInductionVar(), cIndex(threads)));
    if (pieces % threads)
      enterIf(below(piece, pieces));
    Value row = arith::RemUIOp::create(b, loc(), piece, cIndex(R));
    Value k0 = mul(arith::DivUIOp::create(b, loc(), piece, cIndex(R)), cIndex(perPiece));
    Value v = LLVM::UndefOp::create(b, loc(), pieceType);
    for (int64_t e = 0; e < perPiece; ++e) {
      Value x = LLVM::LoadOp::create(
          b, loc(), elem,
          sharedElem(scratch, elem, add(mul(add(k0, cIndex(e)), cIndex(pitch)), row)));
      v = LLVM::InsertElementOp::create(b, loc(), v, scalarCast(b, loc(), x, stored), cI32(e));
    }
    Value offset = operandByteOffset(t, swizzled, rows, add(row, cIndex(rowOffset)), k0);
    LLVM::StoreOp::create(b, loc(), v, smemAt(add(areaStart, offset)), 16);
  }
  piecesPending = true;
  return true;
}

Value GpuKernelLowering::operandByteOffset(const MmaTiling &t, bool swizzled, int64_t rows,
                                           Value row, Value k, bool nMajor) {
  // MmaTiling::operandOffset: the K block, then the row, then the byte in
  // the row XOR the row's permutation (which only moves bits [4, 7), left
  // 0 by a row's start).
  int64_t block = t.blockBytes(swizzled, nMajor);
  Value kByte = mul(k, cIndex(t.elemBytes));
  Value kBlock = mul(arith::DivUIOp::create(b, loc(), kByte, cIndex(block)), cIndex(rows * block));
  Value byte = arith::RemUIOp::create(b, loc(), kByte, cIndex(block));
  Value inBlock = add(mul(row, cIndex(block)), byte);
  if (swizzled) {
    Value bits = arith::ShRUIOp::create(b, loc(), mul(row, cIndex(block)), cIndex(7));
    Value permutation = arith::ShLIOp::create(
        b, loc(), arith::AndIOp::create(b, loc(), bits, cIndex(block / 16 - 1)), cIndex(4));
    inBlock = arith::XOrIOp::create(b, loc(), inBlock, permutation);
  }
  return add(kBlock, inBlock);
}

bool GpuKernelLowering::stagesBNMajor(DotOp op, const Product &p) {
  if (!p.t.readsBNMajor() || p.bRing || (p.extra && !p.pair->sharesRhs))
    return false;
  StagedOperand o = stagedOperand(op.getRhs(), /*isLhs=*/false, p.t);
  if (o.kLast)
    return false;
  Operation *def = o.tile.getDefiningOp();
  return !def || !plan.residentTouchedBy(def);
}

FailureOr<GpuKernelLowering::Product> GpuKernelLowering::planProduct(DotOp op, MmaTiling::Kind kind,
                                                                     int64_t warps) {
  Product p;
  std::string why;
  p.pair = pairRunning(kind, op, warps, [&](Operation *o) { return runs(o); });
  FailureOr<MmaTiling> tiling =
      p.pair ? MmaTiling::get(kind, *p.pair, warps, why) : MmaTiling::get(kind, op, warps, why);
  if (failed(tiling))
    return op.emitOpError("under 'mma: ") << schedule.getMma().getValue() << "' " << why;
  p.t = *tiling;
  // A paired dot's other operand goes below the first's; one descriptor
  // reads both, so both are swizzled or neither.
  if (p.pair)
    p.extra = p.pair->sharesRhs ? p.pair->second.getLhs() : p.pair->second.getRhs();
  // Operands a TMA ring brought in the layout the product reads stay where
  // they are (KernelPlan chose them: both halves of a stacked pair or none).
  auto inRing = [&](Value operand) -> const RingOperand * {
    auto it = ringOperands.find(stagedTile(operand).first);
    return it == ringOperands.end() ? nullptr : &it->second;
  };
  p.aRing = inRing(op.getLhs());
  p.bRing = inRing(op.getRhs());
  p.extraRing = p.extra ? inRing(p.extra) : nullptr;
  p.bNMajor = stagesBNMajor(op, p);
  p.aSwizzled = p.aRing || swizzlePays(op.getLhs(), /*isLhs=*/true, p.t);
  p.bSwizzled = p.bRing || swizzlePays(op.getRhs(), /*isLhs=*/false, p.t, p.bNMajor);
  if (p.extra && !p.extraRing) {
    bool &half = p.pair->sharesRhs ? p.aSwizzled : p.bSwizzled;
    half = half && swizzlePays(p.extra, p.pair->sharesRhs, p.t);
  }
  return p;
}

LogicalResult GpuKernelLowering::lowerTensorCoreDot(DotOp op, MmaTiling::Kind kind) {
  if (pairedSeconds.contains(op))
    return success(); // its result came with the dot before it
  if (plan.roles[role].issuesMma)
    return issueServedProduct(op, kind);
  FailureOr<Product> planned = planProduct(op, kind, plan.roles[role].numWarps);
  if (failed(planned))
    return failure();
  const Product &p = *planned;
  const MmaTiling &t = p.t;
  const std::optional<DotPair> &pair = p.pair;
  // Onto a resident tile: scaled in place first, the product accumulated
  // where it lies, nothing read back.
  const ResidentPlan *onto = accumulatesOnto(op);
  if (onto && onto->factor)
    scaleResident(*onto, regs[onto->factor][0]);
  // wgmma issued by this role, not a pair stacking A: its A may come from
  // registers and its accumulators may be its results.
  bool ownAccumulators =
      kind == MmaTiling::Kind::Wgmma && plan.roles[role].issuer < 0 && (!pair || !pair->sharesRhs);
  // A that wgmma can read from this thread's registers is not staged.
  std::optional<ARegisters> aRegs;
  if (ownAccumulators && !p.aRing)
    aRegs = registerOperandA(op, t);
  bool staged = false;
  if (!p.aRing && !aRegs) {
    stageMmaOperand(op.getLhs(), /*isLhs=*/true, t, t.aOffset, p.aSwizzled);
    staged = true;
  }
  if (!p.bRing) {
    stageMmaOperand(op.getRhs(), /*isLhs=*/false, t, t.bOffset, p.bSwizzled, 0, p.bNMajor);
    staged = true;
  }
  if (p.extra && !p.extraRing) {
    stageMmaOperand(p.extra, pair->sharesRhs, t, pair->sharesRhs ? t.aOffset : t.bOffset,
                    pair->sharesRhs ? p.aSwizzled : p.bSwizzled, pair->offset());
    staged = true;
  }
  auto [a, bAt] = operandsAt(p);
  // The barrier or hand-over below waits for every gather of a staging by
  // pieces too.
  piecesPending = false;
  // The tensor cores read shared memory through the async proxy: order the
  // generic-proxy stores before them, then wait for every thread's stores.
  if (staged)
    fenceAsyncProxy();
  // A result laid out as the accumulators lie stays in them.
  // (A pair sharing A: both results, side by side in the accumulators.)
  std::optional<Regs> inFragment;
  if (!onto && ownAccumulators)
    if (LayoutAttr fragment = t.fragmentLayout(b.getContext());
        fragment && op->getAttr(kLayoutAttr) == fragment &&
        (!pair || pair->second->getAttr(kLayoutAttr) == fragment))
      inFragment.emplace(t.rounds() * t.nChunk / 2);
  // A wgmma product that staged nothing and leaves its result in registers
  // used no shared memory of the role's: no barrier after it. (The ring
  // stages it read go back below, each thread's arrival after its own wait;
  // a stage is free once every consumer thread has arrived.)
  bool registersOnly = false;
  if (plan.roles[role].issuer >= 0) {
    handOffProduct(t, /*readBack=*/!onto);
  } else if (kind == MmaTiling::Kind::Wgmma) {
    if (staged)
      syncRole();
    issueWgmma(t, a, bAt, onto ? &fragments[onto] : nullptr, inFragment ? &*inFragment : nullptr,
               aRegs ? &*aRegs : nullptr);
    registersOnly = !staged && (onto || inFragment);
  } else {
    issueTcgen05(t, a, bAt, onto, ringStagesOf(p));
  }
  if (!registersOnly)
    syncRole();
  // The product has read its ring stages: give them back to the copies
  // (tcgen05's commit gave them back already).
  for (const RingOperand *r : {p.aRing, p.bRing, p.extraRing})
    if (r && !r->ring->freedByCommit)
      NVVM::MBarrierArriveOp::create(b, loc(), Type(), emptyBarrier(*r->ring, r->stage), Value());
  if (onto)
    return success();
  if (inFragment) {
    auto keep = [&](DotOp dot, int64_t from) {
      int64_t n = dot.getRhs().getType().getShape()[1];
      Regs out = t.fragmentColumns(ArrayRef<Value>(*inFragment), from, n);
      if (Value acc = dot.getAcc())
        for (auto [r, x] : llvm::enumerate(out))
          x = arith::AddFOp::create(b, loc(), x, regs[acc][r]);
      regs[dot.getResult()] = std::move(out);
    };
    keep(op, 0);
    if (pair) {
      keep(pair->second, pair->offset());
      pairedSeconds.insert(pair->second);
    }
    return success();
  }
  Value dBase = stagingBase(t.dOffset);
  // Each result reads its rows (its columns, for a pair sharing A) back.
  Type f32 = b.getF32Type();
  auto readBack = [&](DotOp dot, int64_t rowFrom, int64_t colFrom) {
    TileLayout l = layoutOf(dot.getResult());
    Regs out = stageIn(l, f32, dBase, [&](ArrayRef<Value> c) {
      return add(mul(add(c[0], cIndex(rowFrom)), cIndex(t.dStride)), add(c[1], cIndex(colFrom)));
    });
    if (dot.getAcc()) {
      const Regs &acc = regs[dot.getAcc()];
      for (int64_t r = 0; r < l.numRegs(); ++r)
        out[r] = arith::AddFOp::create(b, loc(), out[r], acc[r]);
    }
    regs[dot.getResult()] = out;
  };
  readBack(op, 0, 0);
  if (pair) {
    readBack(pair->second, pair->sharesRhs ? pair->offset() : 0,
             pair->sharesRhs ? 0 : pair->offset());
    pairedSeconds.insert(pair->second);
  }
  syncRole();
  return success();
}

std::optional<ARegisters> GpuKernelLowering::registerOperandA(DotOp op, const MmaTiling &t) {
  // Round r of warpgroup wg multiplies rows 64 (wg + r * warpgroups) (no
  // column parts): the rows a fragment layout, or a resident's plan, gives it.
  if (t.nParts != 1 || t.M != t.mTiles * 64 || t.mTiles % t.warpgroups)
    return std::nullopt;
  Value lhs = op.getLhs();
  // v(round, i, h, c): this thread's element of the A tile at row 64 (wg +
  // round * warpgroups) + 16 (warp % 4) + lane / 4 + 8h, column 8i + 2 (lane
  // % 4) + c: where an accumulator of the same shape keeps it.
  std::function<Value(int64_t, int64_t, int64_t, int64_t)> v;
  Operation *def = lhs.getDefiningOp();
  const ResidentPlan *res = def ? plan.residentTouchedBy(def) : nullptr;
  if (res && isa<CastOp>(def)) {
    MmaTiling held = residentTiling(*res);
    if (!res->inRegisters || held.nParts != 1 || held.N != t.K || held.M != t.M ||
        held.warpgroups != t.warpgroups)
      return std::nullopt;
    Type elem = cast<TileType>(lhs.getType()).getElementType();
    const Regs &f = fragments[res];
    int64_t perRound = held.nChunk / 2;
    v = [&, perRound, elem](int64_t round, int64_t i, int64_t h, int64_t c) {
      return scalarCast(b, loc(), f[round * perRound + 4 * i + 2 * h + c], elem);
    };
  } else {
    LayoutAttr fragment = t.fragmentLayout(b.getContext());
    auto attr = def ? def->getAttrOfType<LayoutAttr>(kLayoutAttr) : LayoutAttr();
    // fragmentLayout() is the same for every N: compare it with the lhs's.
    if (!fragment || attr != fragment)
      return std::nullopt;
    const Regs &x = regs[lhs];
    int64_t columns = t.K;
    v = [&x, columns](int64_t round, int64_t i, int64_t h, int64_t c) {
      return x[MmaTiling::fragmentRegister(columns, round, 4 * i + 2 * h + c)];
    };
  }
  Type i32 = b.getI32Type();
  ARegisters out;
  bool tf32 = t.operands == MmaTiling::Operands::TF32;
  Value src, odd;
  if (tf32) {
    // tf32 A: row r's columns t and t + 4 of each 8 in lane t of the quad;
    // an accumulator keeps columns 2t and 2t + 1 there. Each word comes from
    // the quad's lane t / 2 (+ 2), the pair's element t % 2.
    Value quad = arith::AndIOp::create(b, loc(), laneI32(), cI32(~3));
    Value within = arith::AndIOp::create(b, loc(), laneI32(), cI32(3));
    src = arith::OrIOp::create(b, loc(), quad, arith::ShRUIOp::create(b, loc(), within, cI32(1)));
    odd = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ne,
                                arith::AndIOp::create(b, loc(), within, cI32(1)), cI32(0));
  }
  for (int64_t round = 0; round < t.rounds(); ++round)
    for (int64_t s = 0; s * t.kStep < t.K; ++s) {
      SmallVector<Value, 4> words;
      if (!tf32) {
        // 16-bit A: words (row, 8-column half) = (g, 0), (g + 8, 0), (g, 1),
        // (g + 8, 1), each the accumulator's pair of consecutive columns.
        Type pairType = VectorType::get({2}, cast<TileType>(lhs.getType()).getElementType());
        for (int64_t half = 0; half < 2; ++half)
          for (int64_t h = 0; h < 2; ++h) {
            Value pair = LLVM::UndefOp::create(b, loc(), pairType);
            for (int64_t c = 0; c < 2; ++c)
              pair = LLVM::InsertElementOp::create(b, loc(), pair, v(round, 2 * s + half, h, c),
                                                   cI32(c));
            words.push_back(LLVM::BitcastOp::create(b, loc(), i32, pair));
          }
      } else {
        for (int64_t up = 0; up < 2; ++up) // columns t, then t + 4
          for (int64_t h = 0; h < 2; ++h) {
            Value from = up ? arith::AddIOp::create(b, loc(), src, cI32(2)).getResult() : src;
            Value pick[2];
            for (int64_t c = 0; c < 2; ++c)
              pick[c] =
                  shuffleIndexed(LLVM::BitcastOp::create(b, loc(), i32, v(round, s, h, c)), from);
            words.push_back(arith::SelectOp::create(b, loc(), odd, pick[1], pick[0]));
          }
      }
      out.push_back(std::move(words));
    }
  return out;
}

Value GpuKernelLowering::wgmmaRegisterA(const MmaTiling &t, Value acc, ArrayRef<Value> a,
                                        Value bDesc, bool zero, bool bNMajor) {
  int64_t n = t.nChunk / 2;
  bool tf32 = t.operands == MmaTiling::Operands::TF32;
  const char *type = tf32 ? "tf32" : t.operands == MmaTiling::Operands::BF16 ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + std::string(zero ? "0" : "1") +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(t.nChunk) + "k" +
                     std::to_string(t.kStep) + ".f32." + type + "." + type + " {";
  std::string constraints;
  for (int64_t j = 0; j < n; ++j) {
    text += (j ? ", $" : "$") + std::to_string(j);
    constraints += (j ? ",=f" : "=f");
  }
  // Operands count the n outputs first, then the n accumulators tied to
  // them, then A's words and B's descriptor.
  text += "}, {$" + std::to_string(2 * n) + ", $" + std::to_string(2 * n + 1) + ", $" +
          std::to_string(2 * n + 2) + ", $" + std::to_string(2 * n + 3) + "}, $" +
          std::to_string(2 * n + 4) + ", p, 1, 1" +
          (tf32      ? ""
           : bNMajor ? ", 1"
                     : ", 0") +
          ";\n}";
  SmallVector<Value> operands;
  for (int64_t j = 0; j < n; ++j) {
    operands.push_back(LLVM::ExtractValueOp::create(b, loc(), acc, j));
    constraints += "," + std::to_string(j);
  }
  llvm::append_range(operands, a);
  constraints += ",r,r,r,r,l";
  operands.push_back(bDesc);
  return LLVM::InlineAsmOp::create(b, loc(), acc.getType(), operands, b.getStringAttr(text),
                                   b.getStringAttr(constraints), b.getUnitAttr(), UnitAttr(),
                                   LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

std::optional<Regs> GpuKernelLowering::transposedInRegisters(TransposeOp tr) {
  TileLayout in = layoutOf(tr.getInput()), out = layoutOf(tr.getResult());
  ArrayRef<int64_t> perm = tr.getPermutation();
  if (in.size != out.size || in.lanes != out.lanes || in.warps != out.warps ||
      in.lanesFirst != out.lanesFirst)
    return std::nullopt;
  for (auto [d, p] : llvm::enumerate(perm))
    if (out.dims[d] != in.dims[p])
      return std::nullopt;
  const Regs &from = regs[tr.getInput()];
  Regs to(out.numRegs());
  for (int64_t r = 0; r < out.numRegs(); ++r) {
    SmallVector<int64_t, 2> index = out.regIndex(r), source(index.size());
    for (auto [d, p] : llvm::enumerate(perm))
      source[p] = index[d];
    to[r] = from[in.regNumber(source)];
  }
  return to;
}

Value GpuKernelLowering::operandDescriptor(const MmaTiling &t, OperandAt at, Value offset,
                                           int64_t rows) {
  // The start address in 16-byte units, then the layout and strides.
  bool swizzled = at.swizzled;
  Type i64 = b.getI64Type();
  auto i64Const = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc(), v, 64); };
  Value areaAddr = LLVM::PtrToIntOp::create(b, loc(), i64, at.base);
  Value addr =
      arith::AddIOp::create(b, loc(), areaAddr, arith::IndexCastOp::create(b, loc(), i64, offset));
  Value start = arith::ShRUIOp::create(
      b, loc(), arith::AndIOp::create(b, loc(), addr, i64Const(0x3FFFF)), i64Const(4));
  return arith::OrIOp::create(b, loc(), start,
                              i64Const(t.descriptorBits(rows, swizzled, at.nMajor)));
}

void GpuKernelLowering::forEachFragmentPair(
    const MmaTiling &t, Value mTile, Value nPart,
    function_ref<void(int64_t reg, Value row, Value col)> visit) {
  // Registers 4i + 2h + {0, 1} of a thread hold row 16 * warp + lane / 4 +
  // 8h, columns 8i + 2 * (lane % 4) + {0, 1}.
  Value warpInGroup = arith::RemUIOp::create(b, loc(), warp, cIndex(4));
  Value row0 = add(mul(mTile, cIndex(64)), add(mul(warpInGroup, cIndex(16)),
                                               arith::DivUIOp::create(b, loc(), lane, cIndex(4))));
  Value col0 = add(mul(nPart, cIndex(t.nChunk)),
                   mul(arith::RemUIOp::create(b, loc(), lane, cIndex(4)), cIndex(2)));
  for (int64_t i = 0; i < t.nChunk / 8; ++i)
    for (int64_t h = 0; h < 2; ++h)
      visit(4 * i + 2 * h, add(row0, cIndex(8 * h)), add(col0, cIndex(8 * i)));
}

void GpuKernelLowering::forEachResidentPair(
    const MmaTiling &t, function_ref<void(int64_t reg, Value row, Value col)> visit) {
  // KernelPlan made the items a multiple of the warpgroups: no idle turns.
  Value wg = arith::DivUIOp::create(b, loc(), warp, cIndex(4));
  for (int64_t round = 0; round < t.rounds(); ++round) {
    Value item = add(wg, cIndex(round * t.warpgroups));
    forEachFragmentPair(
        t, arith::DivUIOp::create(b, loc(), item, cIndex(t.nParts)),
        arith::RemUIOp::create(b, loc(), item, cIndex(t.nParts)),
        [&](int64_t reg, Value row, Value col) { visit(round * t.nChunk / 2 + reg, row, col); });
  }
}

void GpuKernelLowering::issueWgmma(const MmaTiling &t, OperandAt a, OperandAt bAt, Regs *fragment,
                                   Regs *results, const ARegisters *aRegs) {
  bool aSwizzled = a.swizzled, bSwizzled = bAt.swizzled;
  using Operands = MmaTiling::Operands;
  Type f32 = b.getF32Type();
  MLIRContext *ctx = b.getContext();
  auto wgmmaType = [&](Operands o) {
    return o == Operands::TF32   ? NVVM::WGMMATypes::tf32
           : o == Operands::BF16 ? NVVM::WGMMATypes::bf16
                                 : NVVM::WGMMATypes::f16;
  };
  Value wg = arith::DivUIOp::create(b, loc(), warp, cIndex(4));
  Value dBase = stagingBase(t.dOffset);
  auto accType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(t.nChunk / 2, f32));
  for (int64_t round = 0; round < t.rounds(); ++round) {
    OpBuilder::InsertionGuard guard(b);
    Value item = warpgroupTurn(wg, round, t.warpgroups, t.items());
    Value mTile = arith::DivUIOp::create(b, loc(), item, cIndex(t.nParts));
    Value nPart = arith::RemUIOp::create(b, loc(), item, cIndex(t.nParts));
    Value aStart = mul(mTile, cIndex(64 * t.blockBytes(aSwizzled)));
    // K-major, a part's rows start nChunk rows on; N-major, its columns
    // start nChunk x K elements on (whole N blocks of every K row).
    Value bStart = mul(nPart, cIndex(bAt.nMajor ? t.nChunk * t.elemBytes * t.K
                                                : t.nChunk * t.blockBytes(bSwizzled)));
    int64_t bRows = bAt.nMajor ? t.K : t.rowsB;
    Value acc = LLVM::UndefOp::create(b, loc(), accType);
    int64_t first = round * t.nChunk / 2;
    if (fragment)
      for (int64_t j = 0; j < t.nChunk / 2; ++j)
        acc = LLVM::InsertValueOp::create(b, loc(), acc, (*fragment)[first + j], j);
    NVVM::WgmmaFenceAlignedOp::create(b, loc());
    for (int64_t s = 0; s * t.kStep < t.K; ++s) {
      // One instruction reads 32 bytes of K: two plain K blocks, or part of
      // one swizzled block, whose rows the hardware permutes from the start
      // address on.
      // (N-major, a K step is kStep of B's rows.)
      Value bStep =
          add(bStart, cIndex(bAt.nMajor ? t.linearOffset(s * t.kStep, 0, bRows, bSwizzled, true)
                                        : t.linearOffset(0, s * t.kStep, bRows, bSwizzled)));
      if (aRegs) {
        acc = wgmmaRegisterA(t, acc, (*aRegs)[round * (t.K / t.kStep) + s],
                             operandDescriptor(t, bAt, bStep, bRows), s == 0 && !fragment,
                             bAt.nMajor);
        continue;
      }
      Value aAt = add(aStart, cIndex(t.linearOffset(0, s * t.kStep, t.rowsA, aSwizzled)));
      acc = NVVM::WgmmaMmaAsyncOp::create(
          b, loc(), accType, acc, operandDescriptor(t, a, aAt, t.rowsA),
          operandDescriptor(t, bAt, bStep, bRows),
          NVVM::MMAShapeAttr::get(ctx, 64, t.nChunk, t.kStep), wgmmaType(t.operands),
          wgmmaType(t.operands), NVVM::WGMMATypes::f32,
          s == 0 && !fragment ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
          // B "row" (N-major) sets the transpose bit.
          bAt.nMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col, NVVM::MMAIntOverflowAttr());
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc());
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc(), 0);
    if (fragment) {
      for (int64_t j = 0; j < t.nChunk / 2; ++j)
        (*fragment)[first + j] = LLVM::ExtractValueOp::create(b, loc(), acc, j);
      continue;
    }
    if (results) {
      // fragmentLayout() gives every warpgroup a turn in every round: no
      // branch holds these values.
      for (int64_t j = 0; j < t.nChunk / 2; ++j)
        (*results)[t.fragmentRegister(round, j)] = LLVM::ExtractValueOp::create(b, loc(), acc, j);
      continue;
    }
    forEachFragmentPair(t, mTile, nPart, [&](int64_t reg, Value row, Value col) {
      storeFragmentPair(t, dBase, row, col, LLVM::ExtractValueOp::create(b, loc(), acc, reg),
                        LLVM::ExtractValueOp::create(b, loc(), acc, reg + 1));
    });
  }
}

void GpuKernelLowering::storeFragmentPair(const MmaTiling &t, Value dBase, Value row, Value col,
                                          Value x0, Value x1) {
  OpBuilder::InsertionGuard guard(b);
  Value inside;
  if (t.M % 64)
    inside = below(row, t.M);
  if (t.N % 8)
    inside = andOf(inside, below(col, t.N));
  if (inside)
    enterIf(inside);
  // A column past an odd N is never read; the row's padding holds it.
  Type f32 = b.getF32Type();
  Value pair = LLVM::UndefOp::create(b, loc(), VectorType::get({2}, f32));
  for (auto [j, x] : llvm::enumerate(std::array<Value, 2>{x0, x1}))
    pair = LLVM::InsertElementOp::create(b, loc(), pair, x, cI32(j));
  LLVM::StoreOp::create(b, loc(), pair,
                        sharedElem(dBase, f32, add(mul(row, cIndex(t.dStride)), col)),
                        t.dStride % 2 ? 4 : 8);
}

void GpuKernelLowering::issueTcgen05Items(const MmaTiling &t, OperandAt a, OperandAt bAt,
                                          Value done, const ResidentPlan *onto,
                                          ArrayRef<const RingOperand *> freed) {
  assert(!bAt.nMajor && "tcgen05 products stage B K-major");
  bool aSwizzled = a.swizzled, bSwizzled = bAt.swizzled;
  using Operands = MmaTiling::Operands;
  MLIRContext *ctx = b.getContext();
  const RolePlan &rp = productRole();
  auto cta1 = NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1);
  tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  auto kind = NVVM::Tcgen05MMAKindAttr::get(
      ctx, t.operands == Operands::TF32 ? NVVM::Tcgen05MMAKind::TF32 : NVVM::Tcgen05MMAKind::F16);
  Value idesc = cI32(t.instructionDescriptor());
  // The K steps run as a loop: one thread issues them, and unrolled, the
  // hoisted descriptors of every step would hold registers of the role.
  for (int64_t item = 0; item < t.items(); ++item) {
    int64_t mTile = item / t.nParts, nPart = item % t.nParts;
    int64_t aStart = mTile * t.instrM * t.blockBytes(aSwizzled);
    int64_t bStart = nPart * t.nChunk * t.blockBytes(bSwizzled);
    int64_t columns = onto ? onto->columnOffset : rp.tmemColumnOffset;
    Value d = tmemAt(cI32(columns + item * t.nChunk));
    auto steps = scf::ForOp::create(b, loc(), cIndex(0), cIndex(t.K / t.kStep), cIndex(1));
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPoint(steps.getBody()->getTerminator());
    Value s = steps.getInductionVar();
    // linearOffset of K step s: whole K blocks, then bytes into one.
    auto stepOffset = [&](int64_t start, int64_t rows, bool swizzled) {
      int64_t block = t.blockBytes(swizzled);
      Value kByte = mul(s, cIndex(32));
      return add(cIndex(start), add(mul(arith::DivUIOp::create(b, loc(), kByte, cIndex(block)),
                                        cIndex(rows * block)),
                                    arith::RemUIOp::create(b, loc(), kByte, cIndex(block))));
    };
    // Onto a resident tile every step accumulates; otherwise the first
    // step overwrites what the last product left.
    Value accumulate =
        onto ? arith::ConstantIntOp::create(b, loc(), 1, 1).getResult()
             : arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ne, s, cIndex(0)).getResult();
    NVVM::Tcgen05MMAOp::create(
        b, loc(), kind, cta1, NVVM::Tcgen05MMACollectorOpAttr(), UnitAttr(), d,
        operandDescriptor(t, a, stepOffset(aStart, t.rowsA, aSwizzled), t.rowsA),
        operandDescriptor(t, bAt, stepOffset(bStart, t.rowsB, bSwizzled), t.rowsB), idesc,
        accumulate, Value(), Value());
  }
  // Arrives on the barrier once every product above has finished; so do
  // the commits that free the ring stages the products read in place.
  NVVM::Tcgen05CommitOp::create(b, loc(), done, Value(), cta1);
  for (const RingOperand *r : freed)
    NVVM::Tcgen05CommitOp::create(b, loc(), emptyBarrier(*r->ring, r->stage), Value(), cta1);
}

void GpuKernelLowering::waitCounted(Value barrier) {
  Type i32 = b.getI32Type();
  Value waits = LLVM::LoadOp::create(b, loc(), i32, mmaWaits);
  waitBarrier(barrier, arith::AndIOp::create(b, loc(), waits, cI32(1)));
  LLVM::StoreOp::create(b, loc(), arith::AddIOp::create(b, loc(), waits, cI32(1)), mmaWaits);
}

void GpuKernelLowering::issueTcgen05(const MmaTiling &t, OperandAt a, OperandAt bAt,
                                     const ResidentPlan *onto,
                                     ArrayRef<const RingOperand *> freed) {
  // The last products' columns were read (tcgen05.wait::ld) before the
  // barrier; the fences order those reads before the MMAs that overwrite them.
  tcgen05Fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  syncRole();
  Value barrier = smemAt(cIndex(productRole().mmaBarrierOffset));
  {
    OpBuilder::InsertionGuard guard(b);
    enterLeaderOnly();
    issueTcgen05Items(t, a, bAt, barrier, onto, freed);
  }
  waitCounted(barrier);
  tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  if (!onto)
    readTensorMemory(t);
}

void GpuKernelLowering::handOffProduct(const MmaTiling &t, bool readBack) {
  const RolePlan &rp = plan.roles[role];
  bool tcgen05 = t.kind == MmaTiling::Kind::Tcgen05;
  // Every thread's staging stores (and, for tcgen05, its reads of the last
  // product's columns) are ordered before the issuer's MMAs by the arrive.
  if (tcgen05)
    tcgen05Fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  NVVM::MBarrierArriveOp::create(b, loc(), Type(), smemAt(cIndex(rp.mmaReadyOffset)), Value());
  waitCounted(smemAt(cIndex(rp.mmaBarrierOffset)));
  if (!tcgen05)
    return; // the issuing warpgroup wrote the result rows
  tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  if (readBack)
    readTensorMemory(t);
}

LogicalResult GpuKernelLowering::issueServedProduct(DotOp op, MmaTiling::Kind kind) {
  const RolePlan &rp = plan.roles[role], &served = plan.roles[rp.serves];
  // wgmma's items are dealt to the issuing warpgroup; tcgen05 plans as the
  // served role does (its warps read the columns back). Either way the
  // operands lie where the served role staged them, swizzled as it chose.
  FailureOr<Product> planned =
      planProduct(op, kind, kind == MmaTiling::Kind::Wgmma ? rp.numWarps : served.numWarps);
  if (failed(planned))
    return failure();
  const MmaTiling &t = planned->t;
  if (planned->pair)
    pairedSeconds.insert(planned->pair->second);
  auto [a, bAt] = operandsAt(*planned);
  waitCounted(smemAt(cIndex(served.mmaReadyOffset)));
  Value done = smemAt(cIndex(served.mmaBarrierOffset));
  if (kind == MmaTiling::Kind::Wgmma) {
    issueWgmma(t, a, bAt);
    // Each thread's result stores are ordered before its arrive.
    NVVM::MBarrierArriveOp::create(b, loc(), Type(), done, Value());
    return success();
  }
  OpBuilder::InsertionGuard guard(b);
  enterLeaderOnly();
  issueTcgen05Items(t, a, bAt, done, accumulatesOnto(op), ringStagesOf(*planned));
  return success();
}

void GpuKernelLowering::forEachColumnBlock(
    const MmaTiling &t, int64_t columnBase,
    function_ref<void(Value at, Value row, Value col0, Value inside)> visit) {
  Type i32 = b.getI32Type();
  // Each warp reaches the lanes of its quarter (its warp index in the CTA
  // mod 4): 32 rows of a 128-row product, or 16 (lanes 0-15 of the quarter)
  // of a 64-row one. The role's warpgroups take blocks of columns in turn.
  Value quarter = arith::RemUIOp::create(
      b, loc(), arith::DivUIOp::create(b, loc(), tid, cIndex(32)), cIndex(4));
  Value wg = arith::DivUIOp::create(b, loc(), warp, cIndex(4));
  Value laneField = arith::ShLIOp::create(
      b, loc(), mul(arith::IndexCastOp::create(b, loc(), i32, quarter), cI32(32)), cI32(16));
  int64_t rowsPerQuarter = t.instrM / 4, perItem = t.nChunk / t.loadColumns;
  Value rowInTile = add(mul(quarter, cIndex(rowsPerQuarter)), lane);
  for (int64_t round = 0; round < t.loadRounds(); ++round) {
    OpBuilder::InsertionGuard guard(b);
    Value block = warpgroupTurn(wg, round, t.warpgroups, t.loadBlocks());
    Value item = arith::DivUIOp::create(b, loc(), block, cIndex(perItem));
    Value inItem = arith::RemUIOp::create(b, loc(), block, cIndex(perItem));
    Value column = add(cIndex(columnBase),
                       add(mul(item, cIndex(t.nChunk)), mul(inItem, cIndex(t.loadColumns))));
    Value at = tmemAt(arith::AddIOp::create(b, loc(), laneField,
                                            arith::IndexCastOp::create(b, loc(), i32, column)));
    Value mTile = arith::DivUIOp::create(b, loc(), item, cIndex(t.nParts));
    Value nPart = arith::RemUIOp::create(b, loc(), item, cIndex(t.nParts));
    Value row = add(mul(mTile, cIndex(t.instrM)), rowInTile);
    Value inside;
    if (rowsPerQuarter < 32)
      inside = below(lane, rowsPerQuarter);
    if (t.M % t.instrM)
      inside = andOf(inside, below(row, t.M));
    Value col0 = add(mul(nPart, cIndex(t.nChunk)), mul(inItem, cIndex(t.loadColumns)));
    visit(at, row, col0, inside);
  }
}

SmallVector<Value> GpuKernelLowering::loadColumns(Value at, int64_t n) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Value loaded = NVVM::Tcgen05LdOp::create(
      b, loc(), VectorType::get({n}, i32), UnitAttr(),
      NVVM::Tcgen05LdStShapeAttr::get(ctx, NVVM::Tcgen05LdStShape::SHAPE_32X32B), at, Value());
  // The loaded registers are defined only after tcgen05.wait::ld, but the
  // wait as an intrinsic names none of them, and LLVM moves their uses
  // above it. The wait goes through the registers instead: an asm that
  // takes and gives back each of them, so every use comes after it.
  std::string constraints;
  for (int64_t j = 0; j < n; ++j)
    constraints += "=r,";
  for (int64_t j = 0; j < n; ++j)
    constraints += std::to_string(j) + (j + 1 < n ? "," : "");
  SmallVector<Value> words;
  for (int64_t j = 0; j < n; ++j)
    words.push_back(LLVM::ExtractElementOp::create(b, loc(), loaded, cI32(j)));
  auto wordsType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(n, i32));
  Value waited = LLVM::InlineAsmOp::create(
                     b, loc(), wordsType, words, b.getStringAttr("tcgen05.wait::ld.sync.aligned;"),
                     b.getStringAttr(constraints), b.getUnitAttr(), UnitAttr(),
                     LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr())
                     .getResult(0);
  SmallVector<Value> out;
  for (int64_t j = 0; j < n; ++j)
    out.push_back(LLVM::ExtractValueOp::create(b, loc(), waited, j));
  return out;
}

void GpuKernelLowering::copyColumnsToRows(const MmaTiling &t, int64_t columnBase) {
  Type f32 = b.getF32Type();
  Value dBase = stagingBase(t.dOffset);
  auto quadType = VectorType::get({4}, f32);
  forEachColumnBlock(t, columnBase, [&](Value at, Value row, Value col0, Value inside) {
    SmallVector<Value> words = loadColumns(at, t.loadColumns);
    if (inside)
      enterIf(inside);
    // Columns past N land in the row's padding, which nobody reads.
    Value rowStart = add(mul(row, cIndex(t.dStride)), col0);
    for (int64_t q = 0; q < t.loadColumns / 4; ++q) {
      Value quad = LLVM::UndefOp::create(b, loc(), quadType);
      for (int64_t j = 0; j < 4; ++j)
        quad = LLVM::InsertElementOp::create(
            b, loc(), quad, LLVM::BitcastOp::create(b, loc(), f32, words[4 * q + j]), cI32(j));
      LLVM::StoreOp::create(b, loc(), quad, sharedElem(dBase, f32, add(rowStart, cIndex(4 * q))),
                            16);
    }
  });
}

MmaTiling GpuKernelLowering::residentTiling(const ResidentPlan &res) {
  std::string why;
  // KernelPlan sized the columns from this plan: it cannot fail here.
  return *MmaTiling::get(res.inRegisters ? MmaTiling::Kind::Wgmma : MmaTiling::Kind::Tcgen05,
                         res.update, plan.roles[res.role].numWarps, why);
}

void GpuKernelLowering::writeResident(const ResidentPlan &res, Value tile) {
  MmaTiling t = residentTiling(res);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  Value dBase = stagingBase(t.dOffset);
  stageOutWith(
      tile, [](Value v) { return v; },
      [&](ArrayRef<Value> c) {
        return sharedElem(dBase, f32, add(mul(c[0], cIndex(t.dStride)), c[1]));
      });
  syncRole();
  if (res.inRegisters) {
    // Each thread takes its fragment's elements; the rows padding M to 64
    // start at 0 (the area holds only the tile's rows).
    Regs fragment(t.rounds() * t.nChunk / 2);
    Value zero = scalarConstant(b, loc(), f32, 0.0);
    forEachResidentPair(t, [&](int64_t reg, Value row, Value col) {
      Value inside = t.M % 64 ? below(row, t.M) : Value();
      Value at = add(mul(inside ? arith::SelectOp::create(b, loc(), inside, row, cIndex(0)) : row,
                         cIndex(t.dStride)),
                     col);
      for (int64_t j = 0; j < 2; ++j) {
        Value x = LLVM::LoadOp::create(b, loc(), f32, sharedElem(dBase, f32, add(at, cIndex(j))));
        fragment[reg + j] = inside ? arith::SelectOp::create(b, loc(), inside, x, zero) : x;
      }
    });
    fragments[&res] = fragment;
    syncRole(); // the rows are free for the next op
    return;
  }
  auto quadType = VectorType::get({4}, f32);
  forEachColumnBlock(t, res.columnOffset, [&](Value at, Value row, Value col0, Value inside) {
    // Lanes past the tile's rows store what row 0 holds into columns' lanes
    // no product reads.
    if (inside)
      row = arith::SelectOp::create(b, loc(), inside, row, cIndex(0));
    Value rowStart = add(mul(row, cIndex(t.dStride)), col0);
    Value words = LLVM::UndefOp::create(b, loc(), VectorType::get({t.loadColumns}, i32));
    for (int64_t q = 0; q < t.loadColumns / 4; ++q) {
      Value quad = LLVM::LoadOp::create(b, loc(), quadType,
                                        sharedElem(dBase, f32, add(rowStart, cIndex(4 * q))), 16);
      for (int64_t j = 0; j < 4; ++j)
        words = LLVM::InsertElementOp::create(
            b, loc(), words,
            LLVM::BitcastOp::create(b, loc(), i32,
                                    LLVM::ExtractElementOp::create(b, loc(), quad, cI32(j))),
            cI32(4 * q + j));
    }
    storeColumns(at, words);
  });
  NVVM::Tcgen05WaitOp::create(b, loc(), NVVM::Tcgen05WaitKind::STORE);
  syncRole(); // the rows are free for the next op
}

void GpuKernelLowering::readResident(const ResidentPlan &res, Value result) {
  MmaTiling t = residentTiling(res);
  if (res.inRegisters) {
    const Regs &fragment = fragments[&res];
    Value dBase = stagingBase(t.dOffset);
    forEachResidentPair(t, [&](int64_t reg, Value row, Value col) {
      storeFragmentPair(t, dBase, row, col, fragment[reg], fragment[reg + 1]);
    });
  } else {
    copyColumnsToRows(t, res.columnOffset);
  }
  syncRole();
  Value dBase = stagingBase(t.dOffset);
  regs[result] = stageIn(layoutOf(result), b.getF32Type(), dBase, [&](ArrayRef<Value> c) {
    return add(mul(c[0], cIndex(t.dStride)), c[1]);
  });
  syncRole();
}

void GpuKernelLowering::scaleResident(const ResidentPlan &res, Value factor) {
  if (res.inRegisters) {
    for (Value &x : fragments[&res])
      x = arith::MulFOp::create(b, loc(), x, factor);
    return;
  }
  MmaTiling t = residentTiling(res);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  forEachColumnBlock(t, res.columnOffset, [&](Value at, Value, Value, Value) {
    SmallVector<Value> words = loadColumns(at, t.loadColumns);
    Value scaled = LLVM::UndefOp::create(b, loc(), VectorType::get({t.loadColumns}, i32));
    for (auto [j, w] : llvm::enumerate(words)) {
      Value x = arith::MulFOp::create(b, loc(), LLVM::BitcastOp::create(b, loc(), f32, w), factor);
      scaled = LLVM::InsertElementOp::create(b, loc(), scaled,
                                             LLVM::BitcastOp::create(b, loc(), i32, x), cI32(j));
    }
    storeColumns(at, scaled);
  });
  // The stores land before the fence and barrier that hand the product over.
  NVVM::Tcgen05WaitOp::create(b, loc(), NVVM::Tcgen05WaitKind::STORE);
}

void GpuKernelLowering::stageResidentOperand(const ResidentPlan &res, Type copyElem, bool isLhs,
                                             const MmaTiling &t, int64_t region, bool swizzled,
                                             int64_t rowOffset) {
  MmaTiling held = residentTiling(res);
  Type f32 = b.getF32Type(), stored = stagedOperandType(t);
  int64_t rows = isLhs ? t.rowsA : t.rowsB, perPiece = t.perCore();
  Value areaStart = cIndex(plan.roles[role].stagingOffset + region);
  if (res.inRegisters) {
    // A thread's pair is two consecutive elements of K in one row: one
    // store of both, rounded to the copy's type first as the cast says.
    const Regs &fragment = fragments[&res];
    auto pairType = VectorType::get({2}, stored);
    forEachResidentPair(held, [&](int64_t reg, Value row, Value col) {
      OpBuilder::InsertionGuard guard(b);
      if (held.M % 64)
        enterIf(below(row, held.M));
      Value pair = LLVM::UndefOp::create(b, loc(), pairType);
      for (int64_t j = 0; j < 2; ++j)
        pair = LLVM::InsertElementOp::create(
            b, loc(), pair,
            scalarCast(b, loc(), scalarCast(b, loc(), fragment[reg + j], copyElem), stored),
            cI32(j));
      Value offset = operandByteOffset(t, swizzled, rows, add(row, cIndex(rowOffset)), col);
      LLVM::StoreOp::create(b, loc(), pair, smemAt(add(areaStart, offset)), 2 * t.elemBytes);
    });
    return;
  }
  auto pieceType = VectorType::get({perPiece}, stored);
  forEachColumnBlock(held, res.columnOffset, [&](Value at, Value row, Value col0, Value inside) {
    SmallVector<Value> words = loadColumns(at, held.loadColumns);
    if (inside)
      enterIf(inside);
    Value stagedRow = add(row, cIndex(rowOffset));
    // One 16-byte piece of the row at a time: K-major, a piece is contiguous.
    for (int64_t j = 0; j < held.loadColumns; j += perPiece) {
      Value piece = LLVM::UndefOp::create(b, loc(), pieceType);
      for (int64_t e = 0; e < perPiece; ++e)
        // Rounded to the copy's type first, as the cast in the source says.
        piece = LLVM::InsertElementOp::create(
            b, loc(), piece,
            scalarCast(b, loc(),
                       scalarCast(b, loc(), LLVM::BitcastOp::create(b, loc(), f32, words[j + e]),
                                  copyElem),
                       stored),
            cI32(e));
      Value offset = operandByteOffset(t, swizzled, rows, stagedRow, add(col0, cIndex(j)));
      LLVM::StoreOp::create(b, loc(), piece, smemAt(add(areaStart, offset)), 16);
    }
  });
}

Value GpuKernelLowering::scratchBuffer(Type elem, int64_t count) {
  OpBuilder::InsertPoint saved = b.saveInsertionPoint();
  b.setInsertionPointToStart(module.getBody());
  std::string name = "__kiln_scratch_" + std::to_string(scratchCount++);
  auto arrayType = LLVM::LLVMArrayType::get(elem, count);
  LLVM::GlobalOp::create(b, loc(), arrayType, /*isConstant=*/false, LLVM::Linkage::Internal, name,
                         Attribute(), /*alignment=*/16, /*addrSpace=*/3);
  b.restoreInsertionPoint(saved);
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  return LLVM::AddressOfOp::create(b, loc(), ptr3, name);
}

LogicalResult GpuKernelLowering::lowerProgramIds(ProgramIdsOp op) {
  unsigned n = op.getIds().size();
  if (n > 3)
    return op.emitOpError("has ") << n << " grid axes; a CUDA grid has at most 3";
  SmallVector<int64_t> order = launchOrder(op);
  Type i32 = b.getI32Type();
  if (plan.persistent) {
    // Resident CTAs stride over the grid points, the first axis of the
    // launch order fastest. The rest of the kernel goes inside the loop.
    if (op->getParentOp() != kernel)
      return op.emitOpError("must be at the top of the kernel for a persistent schedule");
    Value total = cIndex(1);
    for (Value e : op.getExtents())
      total = mul(total, map.lookup(e));
    auto index = [&](Value v) {
      return arith::IndexCastUIOp::create(b, loc(), b.getIndexType(), v);
    };
    Value first = index(NVVM::BlockIdXOp::create(b, loc(), i32));
    Value step = index(NVVM::GridDimXOp::create(b, loc(), i32));
    auto loop = scf::ForOp::create(b, loc(), first, total, step);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value rest = loop.getInductionVar();
    for (int64_t axis : order) {
      Value extent = map.lookup(op.getExtents()[axis]);
      map.map(op.getIds()[axis], arith::RemUIOp::create(b, loc(), rest, extent));
      rest = arith::DivUIOp::create(b, loc(), rest, extent);
    }
    return success();
  }
  for (auto [slot, axis] : llvm::enumerate(order)) {
    Value id = slot == 0   ? (Value)NVVM::BlockIdXOp::create(b, loc(), i32)
               : slot == 1 ? (Value)NVVM::BlockIdYOp::create(b, loc(), i32)
                           : (Value)NVVM::BlockIdZOp::create(b, loc(), i32);
    map.map(op.getIds()[axis], arith::IndexCastUIOp::create(b, loc(), b.getIndexType(), id));
  }
  return success();
}

/// Whether `v` is provably a multiple of `n` (constants, and products or
/// sums of such).
static bool knownMultipleOf(Value v, int64_t n) {
  if (n <= 1)
    return true;
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value() % n == 0;
  if (auto m = v.getDefiningOp<arith::MulIOp>())
    return knownMultipleOf(m.getLhs(), n) || knownMultipleOf(m.getRhs(), n);
  if (auto a = v.getDefiningOp<arith::AddIOp>())
    return knownMultipleOf(a.getLhs(), n) && knownMultipleOf(a.getRhs(), n);
  return false;
}

LogicalResult GpuKernelLowering::lowerAccess(const ViewInfo &vi, ArrayRef<Value> starts,
                                             ArrayRef<Value> floors, ArrayRef<Value> limits,
                                             ArrayRef<int64_t> keep, bool masked, Value tile,
                                             bool isLoad, double other) {
  auto tileType = cast<TileType>(tile.getType());
  Type elem = tileType.getElementType();
  unsigned elemBytes = std::max(1u, elem.getIntOrFloatBitWidth() / 8);
  Type ptrType = vi.ptr.getType();
  auto gep = [&](Value offset) {
    Value off64 = arith::IndexCastOp::create(b, loc(), b.getI64Type(), offset);
    return LLVM::GEPOp::create(b, loc(), ptrType, elem, vi.ptr, ValueRange{off64});
  };

  if (tileType.getRank() == 0) {
    Value offset = cIndex(0);
    for (unsigned d = 0; d < starts.size(); ++d)
      offset = add(offset, mul(starts[d], vi.strides[d]));
    if (isLoad) {
      Value v =
          LLVM::LoadOp::create(b, loc(), elem, gep(offset), elemBytes, false, false, vi.readOnly);
      regs[tile] = {v};
    } else {
      OpBuilder::InsertionGuard guard(b);
      enterLeaderOnly();
      LLVM::StoreOp::create(b, loc(), regs[tile][0], gep(offset), elemBytes);
    }
    return success();
  }

  TileLayout l = layoutOf(tile);
  unsigned rank = l.shape.size();
  // Thread-dependent part of the offset, computed once.
  Value base = cIndex(0);
  SmallVector<Value> coordBase(rank);
  for (unsigned d = 0; d < starts.size(); ++d) {
    Value idx = starts[d];
    auto pos = llvm::find(keep, (int64_t)d);
    if (pos != keep.end()) {
      unsigned td = pos - keep.begin();
      coordBase[td] = add(idx, threadBase(l, td));
      idx = coordBase[td];
    }
    base = add(base, mul(idx, vi.strides[d]));
  }
  WindowBounds bounds{vi, starts, floors, limits};
  // Vector width along the last tile dim when it is the view's contiguous
  // dim, no limit cuts it and every vector start is provably aligned. The
  // dim's own end then never falls inside a vector (static, a multiple of
  // the width), so a mask decided at a vector's first element holds for all
  // of it.
  // A dynamic contiguous dim (the token-last `kgt[HV, K, TP]` of GDN
  // prefill) has its width decided at run time instead: one uniform test
  // picks the vector accesses when the dim is a multiple of it, scalar ones
  // otherwise.
  int64_t vec = 1;
  unsigned last = rank - 1;
  bool dynamicInner = false;
  if (!l.isUnit(last) && keep[last] == (int64_t)vi.type.getRank() - 1 &&
      !(masked && (bounds.limitBinds(keep[last]) || bounds.floorBinds(keep[last])))) {
    int64_t innermost = vi.type.getShape().back();
    dynamicInner = ShapedType::isDynamic(innermost);
    vec = std::min<int64_t>(l.contiguous(last), 16 / elemBytes);
    while (vec > 1 &&
           ((!dynamicInner && innermost % vec != 0) || !knownMultipleOf(starts[keep[last]], vec)))
      vec /= 2;
  }
  Value pred = isLoad ? Value() : ownerPredicate(l);
  scf::IfOp guardIf;
  OpBuilder::InsertionGuard guard(b);
  if (pred) {
    guardIf = scf::IfOp::create(b, loc(), TypeRange{}, pred, false);
    b.setInsertionPoint(guardIf.thenBlock()->getTerminator());
  }
  auto accessAll = [&](int64_t vec) {
    Regs result(l.numRegs());
    const Regs &values = isLoad ? result : regs[tile];
    for (int64_t r = 0; r < l.numRegs(); ++r) {
      SmallVector<int64_t, 2> ri = l.regIndex(r);
      if (ri[last] % vec != 0)
        continue; // inside a vector started earlier
      Value offset = base;
      Value inBounds;
      for (unsigned td = 0; td < rank; ++td) {
        int64_t c = l.constOffset(td, ri[td]);
        unsigned vd = keep[td];
        if (c != 0)
          offset = add(offset, mul(cIndex(c), vi.strides[vd]));
        if (masked) {
          Value coord = add(coordBase[td], cIndex(c));
          // A static dim the window provably stays inside needs no check.
          if (!bounds.inside(vd, l.shape[td]))
            inBounds = andOf(inBounds, arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult,
                                                             coord, vi.dims[vd]));
          if (bounds.limitBinds(vd))
            inBounds = andOf(inBounds, arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt,
                                                             coord, limits[vd]));
          if (bounds.floorBinds(vd))
            inBounds = andOf(inBounds, arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::sge,
                                                             coord, floors[vd]));
        }
      }
      Value ptr = gep(offset);
      if (vec > 1) {
        auto vecType = VectorType::get({vec}, elem);
        if (isLoad) {
          Value v;
          if (inBounds) {
            auto ifOp = scf::IfOp::create(b, loc(), TypeRange{vecType}, inBounds, true);
            OpBuilder tb = ifOp.getThenBodyBuilder();
            scf::YieldOp::create(
                tb, loc(),
                ValueRange{LLVM::LoadOp::create(tb, loc(), vecType, ptr, vec * elemBytes, false,
                                                false, vi.readOnly)});
            OpBuilder eb = ifOp.getElseBodyBuilder();
            Attribute fill = isa<FloatType>(elem) ? (Attribute)eb.getFloatAttr(elem, other)
                                                  : eb.getIntegerAttr(elem, (int64_t)other);
            scf::YieldOp::create(eb, loc(),
                                 ValueRange{LLVM::ConstantOp::create(
                                     eb, loc(), vecType, DenseElementsAttr::get(vecType, fill))});
            v = ifOp.getResult(0);
          } else {
            v = LLVM::LoadOp::create(b, loc(), vecType, ptr, vec * elemBytes, false, false,
                                     vi.readOnly);
          }
          for (int64_t e = 0; e < vec; ++e) {
            Value idx = LLVM::ConstantOp::create(b, loc(), b.getI32Type(), e);
            result[r + e] = LLVM::ExtractElementOp::create(b, loc(), v, idx);
          }
        } else {
          OpBuilder::InsertionGuard storeGuard(b);
          if (inBounds) {
            auto ifOp = scf::IfOp::create(b, loc(), TypeRange{}, inBounds, false);
            b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
          }
          Value v = LLVM::PoisonOp::create(b, loc(), vecType);
          for (int64_t e = 0; e < vec; ++e) {
            Value idx = LLVM::ConstantOp::create(b, loc(), b.getI32Type(), e);
            v = LLVM::InsertElementOp::create(b, loc(), v, values[r + e], idx);
          }
          LLVM::StoreOp::create(b, loc(), v, ptr, vec * elemBytes);
        }
        continue;
      }
      if (isLoad) {
        if (inBounds) {
          auto ifOp = scf::IfOp::create(b, loc(), TypeRange{elem}, inBounds, true);
          OpBuilder tb = ifOp.getThenBodyBuilder();
          Value v =
              LLVM::LoadOp::create(tb, loc(), elem, ptr, elemBytes, false, false, vi.readOnly);
          scf::YieldOp::create(tb, loc(), ValueRange{v});
          OpBuilder eb = ifOp.getElseBodyBuilder();
          scf::YieldOp::create(eb, loc(), ValueRange{scalarConstant(eb, loc(), elem, other)});
          result[r] = ifOp.getResult(0);
        } else {
          result[r] =
              LLVM::LoadOp::create(b, loc(), elem, ptr, elemBytes, false, false, vi.readOnly);
        }
      } else if (inBounds) {
        auto ifOp = scf::IfOp::create(b, loc(), TypeRange{}, inBounds, false);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        LLVM::StoreOp::create(tb, loc(), values[r], ptr, elemBytes);
      } else {
        LLVM::StoreOp::create(b, loc(), values[r], ptr, elemBytes);
      }
    }
    return result;
  };
  if (!dynamicInner || vec == 1) {
    Regs result = accessAll(vec);
    if (isLoad)
      regs[tile] = result;
    return success();
  }
  Value whole = eq(arith::RemUIOp::create(b, loc(), vi.dims.back(), cIndex(vec)), 0);
  auto split = scf::IfOp::create(
      b, loc(), isLoad ? SmallVector<Type>(l.numRegs(), elem) : SmallVector<Type>(), whole, true);
  for (auto [block, width] : {std::pair{split.thenBlock(), vec}, {split.elseBlock(), int64_t(1)}}) {
    OpBuilder::InsertionGuard branch(b);
    if (block->mightHaveTerminator())
      block->getTerminator()->erase();
    b.setInsertionPointToEnd(block);
    Regs result = accessAll(width);
    scf::YieldOp::create(b, loc(), isLoad ? ValueRange(result) : ValueRange());
  }
  if (isLoad)
    regs[tile] = Regs(split.getResults().begin(), split.getResults().end());
  return success();
}

LogicalResult GpuKernelLowering::lowerReduce(ReduceOp op) {
  TileLayout in = layoutOf(op.getInput());
  unsigned axis = op.getAxis();
  Type elem = cast<TileType>(op.getResult().getType()).getElementType();
  ReduceKind kind = op.getKind();
  const Regs &x = regs[op.getInput()];
  bool scalarResult = cast<TileType>(op.getResult().getType()).getRank() == 0;
  TileLayout out = scalarResult ? TileLayout() : layoutOf(op.getResult());
  int64_t numOut = scalarResult ? 1 : out.numRegs();
  // 1. In-thread, in register order.
  Regs partial(numOut);
  for (int64_t r = 0; r < in.numRegs(); ++r) {
    SmallVector<int64_t, 2> ri = in.regIndex(r);
    SmallVector<int64_t, 2> oi(ri);
    oi.erase(oi.begin() + axis);
    int64_t o = scalarResult ? 0 : out.regNumber(oi);
    partial[o] = partial[o] ? reduceCombine(b, loc(), kind, partial[o], x[r]) : x[r];
  }
  if (!in.isUnit(axis)) {
    unsigned p = in.dims[axis];
    // 2. Across the lanes along the axis: butterfly, so every lane ends with
    // the combined value.
    Type i32 = b.getI32Type();
    Value full = LLVM::ConstantOp::create(b, loc(), i32, -1);
    Value clamp = LLVM::ConstantOp::create(b, loc(), i32, 0x1f);
    for (int64_t step = 1; step < in.lanes[p]; step *= 2) {
      Value offset = LLVM::ConstantOp::create(b, loc(), i32, step * in.laneStride(p));
      for (Value &v : partial) {
        Value other = NVVM::ShflOp::create(b, loc(), elem, full, v, offset, clamp,
                                           NVVM::ShflKind::bfly, UnitAttr());
        v = reduceCombine(b, loc(), kind, v, other);
      }
    }
    // 3. Across warps along the axis, through shared memory. Lanes of a
    // warp hold different outputs under one register number, so each lane
    // has its own slots; lane l of another warp of the group along p holds
    // the same outputs.
    if (in.warps[p] > 1) {
      Value scratch = scratchBuffer(elem, numWarps() * 32 * numOut);
      auto ptr3 = scratch.getType();
      unsigned bytes = elem.getIntOrFloatBitWidth() / 8;
      auto slot = [&](Value w, int64_t r) {
        Value i = add(mul(add(mul(w, cIndex(32)), lane), cIndex(numOut)), cIndex(r));
        Value i64 = arith::IndexCastOp::create(b, loc(), b.getI64Type(), i);
        return LLVM::GEPOp::create(b, loc(), ptr3, elem, scratch, ValueRange{i64});
      };
      for (int64_t r = 0; r < numOut; ++r)
        LLVM::StoreOp::create(b, loc(), partial[r], slot(warp, r), bytes);
      syncRole();
      Value mine = warpCoord(in, p);
      Value stride = cIndex(in.warpStride(p));
      // The first warp of this thread's group along p.
      Value first = arith::SubIOp::create(b, loc(), warp, mul(mine, stride));
      for (int64_t r = 0; r < numOut; ++r) {
        Value acc;
        for (int64_t j = 0; j < in.warps[p]; ++j) {
          Value w = add(first, cIndex(j * in.warpStride(p)));
          Value v = LLVM::LoadOp::create(b, loc(), elem, slot(w, r), bytes);
          acc = acc ? reduceCombine(b, loc(), kind, acc, v) : v;
        }
        partial[r] = acc;
      }
      // The scratch may be reused when this op runs again (a loop).
      syncRole();
    }
  }
  regs[op.getResult()] = partial;
  return success();
}

LogicalResult GpuKernelLowering::lowerFor(scf::ForOp op) {
  // Loop-carried tiles travel as their registers, flattened into iter_args;
  // a role carries only the values it uses (KernelPlan).
  // A resident tile goes where its update accumulates before the loop and
  // comes back after it: the loop carries nothing of one in tensor memory,
  // and the wgmma fragment of one in registers (after the others).
  SmallVector<unsigned> kept;
  SmallVector<const ResidentPlan *> residents;
  for (unsigned i = 0; i < op.getNumRegionIterArgs(); ++i) {
    if (!plan.roles[role].carries(op, i))
      continue;
    const ResidentPlan *res = plan.residentOf(op, i);
    if (res && res->role == role)
      residents.push_back(res);
    else
      kept.push_back(i);
  }
  for (const ResidentPlan *res : residents)
    writeResident(*res, op.getInitArgs()[res->index]);
  auto keptOf = [&](ValueRange all) {
    return llvm::map_to_vector(kept, [&](unsigned i) { return all[i]; });
  };
  SmallVector<Value> inits;
  SmallVector<unsigned> counts;
  for (Value init : keptOf(op.getInitArgs())) {
    if (isa<TileType>(init.getType())) {
      const Regs &r = regs[init];
      inits.append(r.begin(), r.end());
      counts.push_back(r.size());
    } else {
      inits.push_back(map.lookup(init));
      counts.push_back(0);
    }
  }
  unsigned keptValues = inits.size();
  auto appendFragments = [&](SmallVector<Value> &to) {
    for (const ResidentPlan *res : residents)
      if (res->inRegisters)
        to.append(fragments[res].begin(), fragments[res].end());
  };
  auto bindFragments = [&](ValueRange from) {
    unsigned k = keptValues;
    for (const ResidentPlan *res : residents)
      if (res->inRegisters) {
        Regs &f = fragments[res];
        f.assign(from.begin() + k, from.begin() + k + f.size());
        k += f.size();
      }
  };
  appendFragments(inits);
  auto loop = scf::ForOp::create(b, loc(), map.lookup(op.getLowerBound()),
                                 map.lookup(op.getUpperBound()), map.lookup(op.getStep()), inits);
  map.map(op.getInductionVar(), loop.getInductionVar());
  auto bindRange = [&](ValueRange from, ValueRange to) {
    unsigned k = 0;
    for (auto [i, v] : llvm::enumerate(from)) {
      if (counts[i]) {
        regs[v] = Regs(to.begin() + k, to.begin() + k + counts[i]);
        k += counts[i];
      } else {
        map.map(v, to[k++]);
      }
    }
  };
  bindRange(keptOf(op.getRegionIterArgs()), loop.getRegionIterArgs());
  bindFragments(loop.getRegionIterArgs());
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = loop.getBody();
    if (body->mightHaveTerminator())
      body->getTerminator()->erase();
    b.setInsertionPointToEnd(body);
    for (Operation &inner : op.getBody()->without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
    SmallVector<Value> yields;
    for (Value v : keptOf(op.getBody()->getTerminator()->getOperands())) {
      if (isa<TileType>(v.getType()))
        yields.append(regs[v].begin(), regs[v].end());
      else
        yields.push_back(map.lookup(v));
    }
    appendFragments(yields);
    scf::YieldOp::create(b, loc(), yields);
  }
  bindRange(keptOf(op.getResults()), loop.getResults());
  bindFragments(loop.getResults());
  for (const ResidentPlan *res : residents)
    if (!op.getResult(res->index).use_empty())
      readResident(*res, op.getResult(res->index));
  return success();
}

LogicalResult GpuKernelLowering::lowerOp(Operation *op) {
  if (!runs(op))
    return success(); // another role's work
  // A resident tile's scale and sum happen at its update, its copies where
  // products stage them.
  if (const ResidentPlan *res = plan.residentTouchedBy(op);
      res && res->role == role && op != res->update)
    return success();
  Location l = loc();
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return lowerFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return lowerIfWithoutResults(ifOp, b, loc(), map, [&](Operation *o) { return lowerOp(o); });
  if (auto ids = dyn_cast<ProgramIdsOp>(op))
    return lowerProgramIds(ids);
  if (isa<ReturnOp>(op))
    return success();
  if (op->getDialect() != kernel->getDialect())
    return cloneScalarOp(op, b, map);

  Value result = op->getNumResults() == 1 && isa<TileType>(op->getResult(0).getType())
                     ? op->getResult(0)
                     : Value();
  int64_t n = 1;
  if (result && cast<TileType>(result.getType()).getRank() > 0)
    n = layoutOf(result).numRegs();
  auto elemOf = [](Value v) { return cast<TileType>(v.getType()).getElementType(); };
  auto each = [&](function_ref<Value(int64_t)> fn) {
    Regs out(n);
    for (int64_t r = 0; r < n; ++r)
      out[r] = fn(r);
    regs[result] = out;
  };

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](LoadOp load) {
        if (const RingPlan *ring = plan.ringOf(load))
          return lowerRingLoad(*ring, load);
        return lowerAccess(views[load.getView()], mapped(load.getIndices()),
                           mapped(load.getFloors()), mapped(load.getLimits()), load.getKeep(),
                           load.getMasked(), load.getResult(), /*isLoad=*/true,
                           load.getOther() ? load.getOther()->convertToDouble() : 0.0);
      })
      .Case([&](StoreOp store) {
        if (const StoreRingPlan *ring = plan.storeRingOf(store))
          return lowerRingStore(*ring, store);
        return lowerAccess(views[store.getView()], mapped(store.getIndices()),
                           mapped(store.getFloors()), mapped(store.getLimits()), store.getKeep(),
                           store.getMasked(), store.getValue(), /*isLoad=*/false, 0.0);
      })
      .Case([&](ConstantOp c) {
        Value v = arith::ConstantOp::create(b, l, c.getValue());
        each([&](int64_t) { return v; });
        return success();
      })
      .Case([&](IotaOp iota) {
        TileLayout tl = layoutOf(result);
        Value base = threadBase(tl, 0);
        Type elem = elemOf(result);
        each([&](int64_t r) -> Value {
          Value idx = add(base, cIndex(tl.constOffset(0, tl.regIndex(r)[0])));
          return arith::IndexCastOp::create(b, l, elem, idx);
        });
        return success();
      })
      .Case([&](FromIndexOp fi) {
        Type elem = elemOf(result);
        Value v = map.lookup(fi.getInput());
        Value asInt =
            arith::IndexCastOp::create(b, l, isa<FloatType>(elem) ? b.getI64Type() : elem, v);
        regs[result] = {scalarCast(b, l, asInt, elem)};
        return success();
      })
      .Case([&](SplatOp sp) {
        Value v = map.lookup(sp.getInput());
        each([&](int64_t) { return v; });
        return success();
      })
      .Case([&](ToIndexOp ti) {
        Value v = regs[ti.getInput()][0];
        Value idx = v.getType().isInteger(1)
                        ? arith::IndexCastUIOp::create(b, l, b.getIndexType(), v).getResult()
                        : arith::IndexCastOp::create(b, l, b.getIndexType(), v).getResult();
        map.map(ti.getResult(), idx);
        return success();
      })
      .Case<AddOp, SubOp, MulOp, DivOp, RemOp, MaxOp, MinOp, AndOp, OrOp, CmpOp>([&](Operation *) {
        const Regs &x = regs[op->getOperand(0)], &y = regs[op->getOperand(1)];
        each([&](int64_t r) { return scalarBinary(b, l, op, x[r], y[r]); });
        return success();
      })
      .Case<NegOp, AbsOp, ExpOp, LogOp, Log1pOp, SqrtOp, RsqrtOp, SigmoidOp, TanhOp, NotOp>(
          [&](Operation *) {
            const Regs &x = regs[op->getOperand(0)];
            each([&](int64_t r) { return scalarUnary(b, l, op, x[r], MathFlavor::Nvvm); });
            return success();
          })
      .Case([&](SelectOp s) {
        const Regs &c = regs[s.getCond()], &x = regs[s.getLhs()], &y = regs[s.getRhs()];
        each([&](int64_t r) { return (Value)arith::SelectOp::create(b, l, c[r], x[r], y[r]); });
        return success();
      })
      .Case([&](CastOp c) {
        const Regs &x = regs[c.getInput()];
        Type to = elemOf(result);
        each([&](int64_t r) { return scalarCast(b, l, x[r], to); });
        return success();
      })
      .Case([&](BroadcastOp bc) {
        const Regs &x = regs[bc.getInput()];
        auto inType = bc.getInput().getType();
        if (inType.getRank() == 0) {
          each([&](int64_t) { return x[0]; });
          return success();
        }
        TileLayout to = layoutOf(result), from = layoutOf(bc.getInput());
        unsigned offset = to.shape.size() - from.shape.size();
        each([&](int64_t r) {
          SmallVector<int64_t, 2> ri = to.regIndex(r), fi;
          for (unsigned d = 0; d < from.shape.size(); ++d)
            fi.push_back(from.isUnit(d) ? 0 : ri[d + offset]);
          return x[from.regNumber(fi)];
        });
        return success();
      })
      .Case([&](ReshapeOp rs) {
        // Only unit dims come or go (tile-assign-layouts checked): the
        // registers keep their order.
        // A copy first: inserting the result may move the map's storage.
        Regs in = regs.lookup(rs.getInput());
        regs[result] = std::move(in);
        return success();
      })
      .Case([&](ReduceOp red) { return lowerReduce(red); })
      .Case([&](ConvertLayoutOp cv) {
        Value base = stagingBase();
        stageOut(cv.getInput(), base);
        syncRole();
        ArrayRef<int64_t> shape = cast<TileType>(cv.getType()).getShape();
        regs[cv.getResult()] = stageIn(layoutOf(cv.getResult()), cv.getType().getElementType(),
                                       base, [&](ArrayRef<Value> c) { return rowMajor(c, shape); });
        syncRole(); // the area is free for the next op
        return success();
      })
      .Case([&](TransposeOp tr) {
        if (foldedIntoTensorCoreDots(tr, schedule))
          return success();
        if (std::optional<Regs> renamed = transposedInRegisters(tr)) {
          regs[tr.getResult()] = std::move(*renamed);
          return success();
        }
        Value base = stagingBase();
        auto inType = tr.getInput().getType();
        SmallVector<int64_t, 2> inShape = transposeStagingShape(inType);
        Type stored = stagedType(b, inType.getElementType());
        stageOutWith(
            tr.getInput(),
            [&](Value v) {
              return v.getType() == stored
                         ? v
                         : arith::ExtUIOp::create(b, loc(), stored, v).getResult();
            },
            [&](ArrayRef<Value> c) { return sharedElem(base, stored, rowMajor(c, inShape)); });
        syncRole();
        ArrayRef<int64_t> perm = tr.getPermutation();
        regs[tr.getResult()] = stageIn(layoutOf(tr.getResult()), tr.getType().getElementType(),
                                       base, [&](ArrayRef<Value> c) {
                                         SmallVector<Value> src(c.size());
                                         for (unsigned i = 0; i < perm.size(); ++i)
                                           src[perm[i]] = c[i];
                                         return rowMajor(src, inShape);
                                       });
        syncRole();
        return success();
      })
      .Case([&](CumsumOp cs) { return lowerCumsum(cs); })
      .Case([&](DotOp dot) { return lowerDot(dot); })
      .Default([&](Operation *) { return op->emitOpError("has no GPU lowering yet"); });
}

void GpuKernelLowering::syncRole() {
  const RolePlan &r = plan.roles[role];
  if (r.numWarps == plan.warps) {
    NVVM::Barrier0Op::create(b, loc());
    return;
  }
  // Named barrier 1 + role, for the role's threads only: the other roles
  // never reach it.
  NVVM::BarrierOp::create(b, loc(), Type(), cI32(1 + role), cI32(r.numWarps * 32),
                          NVVM::BarrierReductionAttr(), Value());
}

Value GpuKernelLowering::smemAt(Value byteOffset) {
  Value off = arith::IndexCastOp::create(b, loc(), b.getI64Type(), byteOffset);
  return LLVM::GEPOp::create(b, loc(), dynamicSmem.getType(), b.getI8Type(), dynamicSmem,
                             ValueRange{off});
}

Value GpuKernelLowering::ringStage(const RingStages &ring, Value stage, int64_t bytes) {
  return smemAt(add(cIndex(ring.offset + bytes), mul(stage, cIndex(ring.stageStride))));
}

Value GpuKernelLowering::ringBarrier(const RingStages &ring, Value index) {
  return smemAt(add(cIndex(ring.barrierOffset), mul(index, cIndex(8))));
}

std::pair<Value, Value> GpuKernelLowering::ringPosition(const RingStages &ring, Value counter) {
  Value n = LLVM::LoadOp::create(b, loc(), b.getI32Type(), counter);
  Value nIdx = arith::IndexCastUIOp::create(b, loc(), b.getIndexType(), n);
  Value stage = arith::RemUIOp::create(b, loc(), nIdx, cIndex(ring.depth));
  Value round = arith::DivUIOp::create(b, loc(), n, cI32(ring.depth));
  Value parity = arith::AndIOp::create(b, loc(), round, cI32(1));
  return {stage, parity};
}

void GpuKernelLowering::bumpCounter(Value counter) {
  Value n = LLVM::LoadOp::create(b, loc(), b.getI32Type(), counter);
  LLVM::StoreOp::create(b, loc(), arith::AddIOp::create(b, loc(), n, cI32(1)), counter);
}

void GpuKernelLowering::waitBarrier(Value barrier, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(b, loc(), barrier, parity, cI32(0x989680));
}

LogicalResult GpuKernelLowering::lowerRingLoad(const RingPlan &ring, LoadOp load) {
  unsigned index = &ring - plan.rings.data();
  TileType tileType = load.getResult().getType();
  if (ring.issuer == role) {
    // One thread issues: the role's only thread when it just copies.
    OpBuilder::InsertionGuard guard(b);
    if (!plan.roles[role].copyOnly)
      enterLeaderOnly();
    auto [stage, parity] = ringPosition(ring, issued[index]);
    // The readers released this stage (a fresh barrier passes parity 1).
    waitBarrier(emptyBarrier(ring, stage), arith::XOrIOp::create(b, loc(), parity, cI32(1)));
    Value full = ringBarrier(ring, stage);
    NVVM::MBarrierArriveExpectTxOp::create(b, loc(), Type(), full, cI32(ring.stageBytes),
                                           NVVM::MemScopeKind::CTA, false, Value());
    // Coordinates innermost first, as the tensor map lists its dims. A
    // tensor-core operand comes as one box per K block (the swizzle's row).
    SmallVector<Value> coords;
    for (Value i : llvm::reverse(load.getIndices()))
      coords.push_back(arith::IndexCastOp::create(b, loc(), b.getI32Type(), map.lookup(i)));
    Value inner = coords.front();
    for (int64_t block = 0; block < ring.kBlocks; ++block) {
      coords.front() = arith::AddIOp::create(b, loc(), inner, cI32(block * ring.box.back()));
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc(), ringStage(ring, stage, block * ring.kBlockStride), tensorMaps[index], coords,
          full, ValueRange{}, Value(), Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/true,
          NVVM::CTAGroupKindAttr(), Value());
    }
    bumpCounter(issued[index]);
  }
  // An issuer also reads the stages of tensor-core operands in place, after
  // their copies land; it reads nothing else, and frees nothing (the served
  // role releases them).
  bool issuerReads = plan.roles[role].issuesMma && ring.mmaOperand();
  if (!ring.consumedBy[role] && !issuerReads)
    return success();
  auto [stage, parity] = ringPosition(ring, consumed[index]);
  waitBarrier(ringBarrier(ring, stage), parity);
  if (ring.mmaOperand()) {
    // Its product reads the stage in place and releases it.
    ringOperands[load.getResult()] = {&ring, stage, ringStage(ring, stage)};
    bumpCounter(consumed[index]);
    return success();
  }
  // The stage holds the box row-major: the tile, dense.
  ViewInfo stageView = denseStage(ringStage(ring, stage), tileType);
  SmallVector<Value> zeros(tileType.getRank(), cIndex(0));
  SmallVector<int64_t> keep = llvm::to_vector(llvm::seq<int64_t>(0, tileType.getRank()));
  // The box came whole from inside the tensor (zeros outside it): limits
  // tighter than the view's dims cut it again, in stage coordinates.
  SmallVector<Value> stageLimits;
  bool cut = false;
  if (load.getMasked() && !load.getLimits().empty()) {
    auto viewType = cast<ViewType>(load.getView().getType());
    for (auto [td, vd] : llvm::enumerate(load.getKeep())) {
      Value limit = map.lookup(load.getLimits()[vd]);
      auto c = limit.getDefiningOp<arith::ConstantIndexOp>();
      if (c && !viewType.isDynamicDim(vd) && c.value() >= viewType.getShape()[vd]) {
        stageLimits.push_back(cIndex(tileType.getShape()[td]));
        continue;
      }
      stageLimits.push_back(
          arith::SubIOp::create(b, loc(), limit, map.lookup(load.getIndices()[vd])));
      cut = true;
    }
  }
  if (!cut)
    stageLimits.clear();
  if (failed(
          lowerAccess(stageView, zeros, {}, stageLimits, keep, cut, load.getResult(), true, 0.0)))
    return failure();
  // The loads above are done before this release (arrive orders them).
  NVVM::MBarrierArriveOp::create(b, loc(), Type(), emptyBarrier(ring, stage), Value());
  bumpCounter(consumed[index]);
  return success();
}

ViewInfo GpuKernelLowering::denseStage(Value base, TileType tile) {
  ViewInfo v;
  v.ptr = base;
  v.type = ViewType::get(b.getContext(), tile.getShape(), {}, tile.getElementType());
  int64_t stride = 1;
  v.strides.resize(tile.getRank());
  for (int64_t d = tile.getRank() - 1; d >= 0; --d) {
    v.dims.insert(v.dims.begin(), cIndex(tile.getShape()[d]));
    v.strides[d] = cIndex(stride);
    stride *= tile.getShape()[d];
  }
  return v;
}

LogicalResult GpuKernelLowering::lowerRingStore(const StoreRingPlan &ring, StoreOp store) {
  unsigned index = &ring - plan.storeRings.data();
  TileType tileType = store.getValue().getType();
  if (ring.writer == role) {
    auto [stage, parity] = ringPosition(ring, stagesWritten[index]);
    // The copies have read this stage (a fresh barrier passes parity 1).
    waitBarrier(emptyBarrier(ring, stage), arith::XOrIOp::create(b, loc(), parity, cI32(1)));
    SmallVector<Value> zeros(tileType.getRank(), cIndex(0));
    SmallVector<int64_t> keep = llvm::to_vector(llvm::seq<int64_t>(0, tileType.getRank()));
    if (failed(lowerAccess(denseStage(ringStage(ring, stage), tileType), zeros, {}, {}, keep,
                           /*masked=*/false, store.getValue(), /*isLoad=*/false, 0.0)))
      return failure();
    // The bulk copies read the stage through the async proxy.
    fenceAsyncProxy();
    NVVM::MBarrierArriveOp::create(b, loc(), Type(), ringBarrier(ring, stage), Value());
    bumpCounter(stagesWritten[index]);
    return success();
  }
  // The copier: its role's one thread.
  auto [stage, parity] = ringPosition(ring, stagesCopied[index]);
  waitBarrier(ringBarrier(ring, stage), parity);
  copyStageOut(store, ringStage(ring, stage));
  // A stage is free once its copies have read it. Waiting for all but the
  // last depth - 1 groups frees the stage the writer needs next while this
  // one's copies still run.
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc());
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc(), ring.depth - 1, b.getUnitAttr());
  Value n = arith::IndexCastUIOp::create(
      b, loc(), b.getIndexType(),
      LLVM::LoadOp::create(b, loc(), b.getI32Type(), stagesCopied[index]));
  {
    OpBuilder::InsertionGuard guard(b);
    int64_t behind = ring.depth - 1;
    if (behind)
      enterIf(arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::uge, n, cIndex(behind)));
    Value freed = arith::RemUIOp::create(
        b, loc(), arith::SubIOp::create(b, loc(), n, cIndex(behind)), cIndex(ring.depth));
    NVVM::MBarrierArriveOp::create(b, loc(), Type(), emptyBarrier(ring, freed), Value());
  }
  bumpCounter(stagesCopied[index]);
  return success();
}

void GpuKernelLowering::copyStageOut(StoreOp store, Value stageBase) {
  const ViewInfo &vi = views[store.getView()];
  TileType tileType = store.getValue().getType();
  Type elem = tileType.getElementType();
  int64_t elemBytes = std::max(1u, elem.getIntOrFloatBitWidth() / 8);
  ArrayRef<int64_t> shape = tileType.getShape(), keep = store.getKeep();
  unsigned last = shape.size() - 1, inner = keep[last];
  int64_t width = shape[last];
  SmallVector<Value> starts = mapped(store.getIndices()), floors = mapped(store.getFloors()),
                     limits = mapped(store.getLimits());
  bool masked = store.getMasked();
  WindowBounds bounds{vi, starts, floors, limits};
  // The elements [lo, hi) of tile dim td the store keeps (the same checks
  // as an element's in lowerAccess), and whether they may be fewer than all.
  auto kept = [&](unsigned td, Value &lo, Value &hi) {
    unsigned vd = keep[td];
    Value start = starts[vd];
    lo = cIndex(0);
    hi = cIndex(shape[td]);
    if (!masked)
      return false;
    bool cut = false;
    auto bound = [&](Value end) {
      hi = arith::MinSIOp::create(b, loc(), hi, arith::SubIOp::create(b, loc(), end, start));
      cut = true;
    };
    if (!bounds.inside(vd, shape[td]))
      bound(vi.dims[vd]);
    if (bounds.limitBinds(vd))
      bound(limits[vd]);
    // Nothing before the sub-view's floor, or before the view's start
    // (lowerAccess's unsigned test) unless the start is known not negative.
    std::optional<int64_t> s = WindowBounds::constant(start);
    if (bounds.floorBinds(vd) || !s || *s < 0) {
      Value floor = bounds.floorBinds(vd) ? floors[vd] : cIndex(0);
      lo = arith::MaxSIOp::create(b, loc(), lo, arith::SubIOp::create(b, loc(), floor, start));
      cut = true;
    }
    return cut;
  };
  Value innerLo, innerHi;
  bool cut = kept(last, innerLo, innerHi);
  // Rows start 16-byte aligned when the view's rows are a multiple of 16
  // bytes (views are 16-byte aligned) and so is the window's start in a row.
  int64_t innermost = vi.type.getShape().back();
  bool alignedRows = !ShapedType::isDynamic(innermost) && innermost * elemBytes % 16 == 0 &&
                     knownMultipleOf(starts[inner], std::max<int64_t>(1, 16 / elemBytes));
  Value whole;
  if (cut)
    whole =
        andOf(arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, innerLo, cIndex(0)),
              arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, innerHi, cIndex(width)));
  // One loop per leading tile dim, over the rows the store keeps.
  OpBuilder::InsertionGuard guard(b);
  Value offset = cIndex(0), stageRow = cIndex(0);
  int64_t stageStride = width;
  SmallVector<Value> coords(shape.size());
  for (int64_t td = last - 1; td >= 0; --td) {
    Value lo, hi;
    kept(td, lo, hi);
    auto rows = scf::ForOp::create(b, loc(), lo, hi, cIndex(1));
    b.setInsertionPoint(rows.getBody()->getTerminator());
    coords[td] = rows.getInductionVar();
  }
  for (int64_t td = last - 1; td >= 0; --td) {
    stageRow = add(stageRow, mul(coords[td], cIndex(stageStride)));
    stageStride *= shape[td];
  }
  for (unsigned vd = 0; vd < starts.size(); ++vd) {
    Value coord = starts[vd];
    auto pos = llvm::find(keep, (int64_t)vd);
    if (pos != keep.end() && (unsigned)(pos - keep.begin()) != last)
      coord = add(coord, coords[pos - keep.begin()]);
    offset = add(offset, mul(coord, vi.strides[vd]));
  }
  Type i64 = b.getI64Type();
  auto global = [&](Value elemOffset) {
    return LLVM::GEPOp::create(b, loc(), vi.ptr.getType(), elem, vi.ptr,
                               ValueRange{arith::IndexCastOp::create(b, loc(), i64, elemOffset)});
  };
  Value rowStage = sharedElem(stageBase, elem, stageRow);
  Value rowGlobal = global(offset);
  // One bulk copy for a whole row at a 16-byte aligned address; plain
  // stores for the rest of a cut or misaligned row.
  if (!alignedRows)
    whole = andOf(whole, arith::CmpIOp::create(
                             b, loc(), arith::CmpIPredicate::eq,
                             arith::AndIOp::create(
                                 b, loc(), LLVM::PtrToIntOp::create(b, loc(), i64, rowGlobal),
                                 arith::ConstantIntOp::create(b, loc(), 15, 64)),
                             arith::ConstantIntOp::create(b, loc(), 0, 64)));
  auto copyRow = [&] {
    NVVM::CpAsyncBulkSharedCTAToGlobalOp::create(b, loc(), rowGlobal, rowStage,
                                                 cI32(width * elemBytes), Value(), Value());
  };
  if (!whole) {
    copyRow();
    return;
  }
  auto bulk = scf::IfOp::create(b, loc(), TypeRange{}, whole, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard inBulk(b);
    b.setInsertionPoint(bulk.thenBlock()->getTerminator());
    copyRow();
  }
  b.setInsertionPoint(bulk.elseBlock()->getTerminator());
  auto elems = scf::ForOp::create(b, loc(), innerLo, innerHi, cIndex(1));
  b.setInsertionPoint(elems.getBody()->getTerminator());
  Value j = elems.getInductionVar();
  Value v = LLVM::LoadOp::create(b, loc(), elem, sharedElem(rowStage, elem, j), elemBytes);
  LLVM::StoreOp::create(b, loc(), v, global(add(offset, mul(j, vi.strides[inner]))), elemBytes);
}

void GpuKernelLowering::initShared() {
  // Roles with MMA barriers are those with tensor-memory columns or an
  // issuer.
  if (plan.rings.empty() && plan.storeRings.empty() && !plan.tmemColumns && !hasIssuer())
    return;
  MLIRContext *ctx = b.getContext();
  auto cta1 = NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1);
  if (plan.tmemColumns) {
    // One whole warp allocates the CTA's tensor memory and writes its
    // address to shared memory; giving up the permit lets the SM's other
    // CTAs allocate as soon as this one frees its columns.
    OpBuilder::InsertionGuard guard(b);
    enterFirstWarp();
    NVVM::Tcgen05AllocOp::create(b, loc(), smemAt(cIndex(plan.tmemSlotOffset)),
                                 cI32(plan.tmemColumns), cta1);
    NVVM::Tcgen05RelinquishAllocPermitOp::create(b, loc(), cta1);
  }
  {
    OpBuilder::InsertionGuard guard(b);
    auto first = scf::IfOp::create(b, loc(), TypeRange{}, eq(tid, 0), false);
    b.setInsertionPoint(first.thenBlock()->getTerminator());
    for (const RingPlan &ring : plan.rings)
      for (int64_t s = 0; s < ring.depth; ++s) {
        NVVM::MBarrierInitOp::create(b, loc(), ringBarrier(ring, cIndex(s)), cI32(1), Value());
        NVVM::MBarrierInitOp::create(b, loc(), emptyBarrier(ring, cIndex(s)),
                                     cI32(ring.consumerThreads), Value());
      }
    // A store ring's stage is full when every thread of its writer has
    // written it, free when the copier's copies have read it.
    for (const StoreRingPlan &ring : plan.storeRings)
      for (int64_t s = 0; s < ring.depth; ++s) {
        NVVM::MBarrierInitOp::create(b, loc(), ringBarrier(ring, cIndex(s)),
                                     cI32(plan.roles[ring.writer].numWarps * 32), Value());
        NVVM::MBarrierInitOp::create(b, loc(), emptyBarrier(ring, cIndex(s)), cI32(1), Value());
      }
    // A role's MMA barrier completes a phase when tcgen05.commit arrives,
    // or when every thread of a wgmma issuer has written the result; its
    // ready barrier when every one of its threads has staged.
    for (const RolePlan &r : plan.roles) {
      if (r.mmaBarrierOffset >= 0) {
        int64_t arrivals = 1;
        if (r.issuer >= 0 && MmaTiling::kindOf(schedule.getMma()) == MmaTiling::Kind::Wgmma)
          arrivals = plan.roles[r.issuer].numWarps * 32;
        NVVM::MBarrierInitOp::create(b, loc(), smemAt(cIndex(r.mmaBarrierOffset)), cI32(arrivals),
                                     Value());
      }
      if (r.mmaReadyOffset >= 0)
        NVVM::MBarrierInitOp::create(b, loc(), smemAt(cIndex(r.mmaReadyOffset)),
                                     cI32(r.numWarps * 32), Value());
    }
    // Makes the initialised barriers visible to the copy engine.
    NVVM::FenceMbarrierInitOp::create(b, loc());
  }
  if (plan.tmemColumns)
    tcgen05Fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  NVVM::Barrier0Op::create(b, loc());
  if (plan.tmemColumns)
    tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
}

void GpuKernelLowering::freeTensorMemory() {
  if (!plan.tmemColumns)
    return;
  // Every role is done with its columns (their reads waited) before the
  // allocating warp frees them.
  tcgen05Fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  NVVM::Barrier0Op::create(b, loc());
  OpBuilder::InsertionGuard guard(b);
  enterFirstWarp();
  tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  NVVM::Tcgen05DeallocOp::create(
      b, loc(), tmemAt(), cI32(plan.tmemColumns),
      NVVM::CTAGroupKindAttr::get(b.getContext(), NVVM::CTAGroupKind::CTA_1));
}

void GpuKernelLowering::setRoleRegisters(const RolePlan &rp) {
  if (plan.reallocRegs && rp.regs != plan.launchRegs)
    NVVM::SetMaxRegisterOp::create(b, loc(), rp.regs,
                                   rp.regs > plan.launchRegs
                                       ? NVVM::SetMaxRegisterAction::increase
                                       : NVVM::SetMaxRegisterAction::decrease);
}

LogicalResult GpuKernelLowering::lowerRole(unsigned r, Block &body, const IRMapping &entryMap,
                                           bool setRegs) {
  role = r;
  const RolePlan &rp = plan.roles[r];
  map = entryMap;
  regs.clear();
  Value warpInCta = arith::DivUIOp::create(b, loc(), tid, cIndex(32));
  lane = arith::RemUIOp::create(b, loc(), tid, cIndex(32));
  warp =
      rp.firstWarp ? arith::SubIOp::create(b, loc(), warpInCta, cIndex(rp.firstWarp)) : warpInCta;
  if (setRegs)
    setRoleRegisters(rp);
  OpBuilder::InsertionGuard guard(b);
  if (rp.copyOnly)
    enterLeaderOnly();
  for (Operation &op : body)
    if (failed(lowerOp(&op)))
      return failure();
  // The role's bulk stores complete before the CTA exits.
  if (llvm::any_of(plan.storeRings, [&](const StoreRingPlan &ring) { return ring.issuer == r; }))
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc(), 0, UnitAttr());
  return success();
}

LogicalResult GpuKernelLowering::run() {
  MLIRContext *ctx = kernel.getContext();
  FunctionType type = kernel.getFunctionType();
  auto ptr0 = LLVM::LLVMPointerType::get(ctx);
  auto ptr1 = LLVM::LLVMPointerType::get(ctx, 1);
  SmallVector<Type> argTypes;
  for (Type t : type.getInputs()) {
    if (isa<ViewType>(t))
      argTypes.push_back(ptr1);
    else if (isa<IndexType>(t))
      argTypes.push_back(b.getI64Type());
    else
      argTypes.push_back(t);
  }
  // One TMA descriptor per ring, after the kernel's own arguments.
  unsigned firstMap = argTypes.size();
  for (size_t i = 0; i < plan.rings.size(); ++i)
    argTypes.push_back(ptr0);
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), argTypes);
  auto func = LLVM::LLVMFuncOp::create(b, loc(), kernel.getSymName(), fnType);
  int64_t threads = plan.warps * 32;
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // The launch needs it; layout conversions add staging the manifest
  // builder (which runs before layouts are chosen) cannot see.
  func->setAttr(kDynamicSharedBytesAttr, b.getI64IntegerAttr(plan.dynamicSharedBytes));
  int64_t conversions = 0;
  kernel.walk([&](ConvertLayoutOp) { ++conversions; });
  func->setAttr(kLayoutConversionsAttr, b.getI64IntegerAttr(conversions));
  if (Attribute divisors = kernel->getAttr(kDivisorsAttr))
    func->setAttr(kDivisorsAttr, divisors); // the launcher's arguments after the parameters
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                b.getDenseI32ArrayAttr({(int32_t)threads, 1, 1}));
  // The register cap at entry; setmaxnreg needs one to take effect.
  if (plan.launchRegs)
    func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(), b.getI32IntegerAttr(plan.launchRegs));
  for (size_t i = 0; i < plan.rings.size(); ++i) {
    unsigned arg = firstMap + i;
    func.setArgAttr(arg, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
    func.setArgAttr(arg, LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(64));
    func.setArgAttr(arg, NVVM::NVVMDialect::getGridConstantAttrName(), b.getUnitAttr());
  }

  Block *entry = func.addEntryBlock(b);
  b.setInsertionPointToEnd(entry);
  auto ret = LLVM::ReturnOp::create(b, loc(), ValueRange{});
  b.setInsertionPoint(ret);

  Block &body = kernel.getBody().front();
  for (auto [i, from] : llvm::enumerate(body.getArguments())) {
    Value to = entry->getArgument(i);
    if (isa<IndexType>(from.getType()))
      to = arith::IndexCastOp::create(b, loc(), b.getIndexType(), to);
    map.map(from, to);
    if (auto view = dyn_cast<ViewType>(from.getType())) {
      StringAttr access = kernel.getArgAttrOfType<StringAttr>(i, kAccessAttr);
      bool readOnly = access && access.getValue() == "in";
      // Views never overlap (documented): lets loads of inputs use the
      // read-only data path and reorder around stores.
      func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
      if (readOnly)
        func.setArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName(), b.getUnitAttr());
      func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(16));
      views[from].ptr = to;
      views[from].type = view;
      views[from].readOnly = readOnly;
    }
  }
  // Dims and strides of every view, once at the entry, in argument order
  // (the output must not depend on hash order).
  for (BlockArgument arg : body.getArguments()) {
    if (!views.count(arg))
      continue;
    ViewInfo &vi = views[arg];
    ViewGeometry g = buildViewGeometry(b, loc(), kernel, vi.type, map);
    vi.dims = g.dims;
    vi.strides = g.strides;
  }
  tid = arith::IndexCastUIOp::create(b, loc(), b.getIndexType(),
                                     NVVM::ThreadIdXOp::create(b, loc(), b.getI32Type()));
  if (plan.dynamicSharedBytes) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto ptr3 = LLVM::LLVMPointerType::get(ctx, 3);
    if (!module.lookupSymbol("__kiln_dynamic_smem"))
      LLVM::GlobalOp::create(b, loc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                             /*isConstant=*/false, LLVM::Linkage::External, "__kiln_dynamic_smem",
                             Attribute(), /*alignment=*/1024, /*addrSpace=*/3);
    b.restoreInsertionPoint(OpBuilder::InsertPoint(entry, Block::iterator(ret)));
    dynamicSmem = LLVM::AddressOfOp::create(b, loc(), ptr3, "__kiln_dynamic_smem");
    auto zeroCounter = [&] {
      Value c = LLVM::AllocaOp::create(b, loc(), ptr0, b.getI32Type(), cI32(1), 4);
      LLVM::StoreOp::create(b, loc(), cI32(0), c);
      return c;
    };
    for (size_t i = 0; i < plan.rings.size(); ++i) {
      tensorMaps.push_back(entry->getArgument(firstMap + i));
      for (auto *counters : {&issued, &consumed})
        counters->push_back(zeroCounter());
    }
    for (size_t i = 0; i < plan.storeRings.size(); ++i)
      for (auto *counters : {&stagesWritten, &stagesCopied})
        counters->push_back(zeroCounter());
  }
  if (plan.tmemColumns || hasIssuer()) {
    mmaWaits = LLVM::AllocaOp::create(b, loc(), ptr0, b.getI32Type(), cI32(1), 4);
    LLVM::StoreOp::create(b, loc(), cI32(0), mmaWaits);
  }
  initShared();

  // One role over the whole CTA needs no branch.
  IRMapping entryMap = map;
  if (plan.roles.size() == 1 && plan.roles[0].firstWarp == 0 &&
      plan.roles[0].numWarps == plan.warps) {
    if (failed(lowerRole(0, body, entryMap, /*setRegs=*/true)))
      return failure();
    freeTensorMemory();
    return success();
  }
  // Otherwise one branch of an if/else chain per role (setmaxnreg takes
  // effect only so); warps outside every role go straight to the end.
  // Roles sharing a warpgroup (one register budget) share a branch that
  // sets it, then split.
  {
    OpBuilder::InsertionGuard guard(b);
    Value warpInCta = arith::DivUIOp::create(b, loc(), tid, cIndex(32));
    auto within = [&](int64_t first, int64_t end) -> Value {
      return arith::AndIOp::create(
          b, loc(),
          arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::uge, warpInCta, cIndex(first)),
          arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, warpInCta, cIndex(end)));
    };
    auto enterElse = [&](Value cond) {
      auto branch = scf::IfOp::create(b, loc(), TypeRange{}, cond, /*withElse=*/true);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      return branch;
    };
    SmallVector<bool> done(plan.roles.size(), false);
    for (auto [r, rp] : llvm::enumerate(plan.roles)) {
      if (done[r])
        continue;
      SmallVector<unsigned> group;
      for (auto [o, other] : llvm::enumerate(plan.roles))
        if (o == r || shareWarpgroup(rp.firstWarp, rp.numWarps, other.firstWarp, other.numWarps))
          group.push_back(o);
      for (unsigned o : group)
        done[o] = true;
      if (group.size() == 1) {
        auto branch = enterElse(within(rp.firstWarp, rp.firstWarp + rp.numWarps));
        if (failed(lowerRole(r, body, entryMap, /*setRegs=*/true)))
          return failure();
        b.setInsertionPoint(branch.elseBlock()->getTerminator());
        continue;
      }
      int64_t first = rp.firstWarp, end = rp.firstWarp + rp.numWarps;
      for (unsigned o : group) {
        first = std::min(first, plan.roles[o].firstWarp);
        end = std::max(end, plan.roles[o].firstWarp + plan.roles[o].numWarps);
      }
      auto shared = enterElse(within(first, end));
      setRoleRegisters(rp);
      for (unsigned o : group) {
        const RolePlan &member = plan.roles[o];
        auto branch = enterElse(within(member.firstWarp, member.firstWarp + member.numWarps));
        if (failed(lowerRole(o, body, entryMap, /*setRegs=*/false)))
          return failure();
        b.setInsertionPoint(branch.elseBlock()->getTerminator());
      }
      b.setInsertionPoint(shared.elseBlock()->getTerminator());
    }
  }
  freeTensorMemory();
  return success();
}

struct ConvertTileToNVVM : kiln::impl::ConvertTileToNVVMBase<ConvertTileToNVVM> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    for (KernelOp kernel : kernels) {
      if (!kernel.getScheduleAttr()) {
        kernel.emitOpError("needs a schedule to lower to NVVM");
        return signalPassFailure();
      }
      FailureOr<KernelPlan> plan = KernelPlan::build(kernel);
      if (failed(plan))
        return signalPassFailure();
      GpuKernelLowering lowering(kernel, module, *plan);
      if (failed(lowering.run()))
        return signalPassFailure();
      kernel.erase();
    }
  }
};

} // namespace
