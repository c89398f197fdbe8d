//===- GpuKernelLowering.h - one tile kernel to NVVM, shared by its parts -===//
//
// convert-tile-to-nvvm lowers each kernel with one GpuKernelLowering; its
// members are defined in ConvertTileToNVVM.cpp (layouts, accesses,
// reductions, control flow, roles), TensorCoreProducts.cpp (dot: SIMT,
// wgmma, tcgen05, residents) and PipelineRings.cpp (TMA rings and their
// mbarriers). Internal to lowering/.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LOWERING_CONVERSION_TILETONVVM_GPUKERNELLOWERING_H
#define KILN_LOWERING_CONVERSION_TILETONVVM_GPUKERNELLOWERING_H

#include "dsl/TileDialect.h"
#include "dsl/schedule/Target.h"
#include "lowering/analysis/KernelPlan.h"
#include "lowering/analysis/KernelWalk.h"
#include "lowering/analysis/Layout.h"
#include "lowering/analysis/MmaTiling.h"
#include "lowering/conversion/Common/ScalarCodegen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace kiln::nvvm {

using namespace mlir;
using namespace kiln::tile;

using Regs = SmallVector<Value, 8>;

/// How global and shared memory hold an element of `elem`: LLVM has no
/// 8-bit float, so an f8e4m3 element moves as its byte and is bitcast in
/// registers; every other type as itself.
inline Type memoryType(Type elem) {
  return isa<Float8E4M3FNType>(elem) ? IntegerType::get(elem.getContext(), 8) : elem;
}
/// The vector and constant position `v` was extracted from, through
/// bitcasts of the element; a null vector otherwise (Float8Pairs.cpp).
std::pair<Value, int64_t> extractedFrom(Value v);
/// The vector whose elements `elems` are, in order, when each is taken
/// from one vector of `type` (extractedFrom: a loaded vector's registers,
/// stored as they came); null otherwise. Building it again element by
/// element is what LLVM folds away and nvcc does not: it took each 16-bit
/// element out of the loaded words and put it back.
inline Value wholeVector(ArrayRef<Value> elems, Type type) {
  if ((int64_t)elems.size() != cast<VectorType>(type).getNumElements())
    return Value();
  Value whole;
  for (auto [e, x] : llvm::enumerate(elems)) {
    auto [from, at] = extractedFrom(x);
    if (!from || from.getType() != type || (whole && from != whole) || at != (int64_t)e)
      return Value();
    whole = from;
  }
  return whole;
}
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
  /// The plan's dynamic shared memory, one line per area (kSharedLayoutAttr).
  ArrayAttr sharedLayout();

private:
  KernelOp kernel;
  ModuleOp module;
  OpBuilder b;
  ScheduleAttr schedule;
  IRMapping map;                       // non-tile values to their copies
  DenseMap<Value, Regs> regs;          // tile values to this thread's registers
  DenseSet<Operation *> pairedSeconds; // dots lowered with the dot before them
  /// B fragment words made from registers (movmatrix) by the dots lowered
  /// together, by B tile, k step and n8 block: a pair reading one B (T P
  /// and P P) transposes it once.
  DenseMap<std::tuple<Value, int64_t, int64_t>, SmallVector<Value>> movedB;
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
  /// Per shared ring: this thread's count of stages passed (written by the
  /// writer, read by a reader), and the stage the block between its first
  /// and last buffer works on.
  SmallVector<Value> sharedPassed, sharedStage;
  /// Per flag wait polled for other roles (KernelPlan::flagWaits): this
  /// thread's count of them passed (i32 allocas).
  SmallVector<Value> flagsPassed;
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

  /// Where the code being built comes from: the tile op being lowered (its
  /// source line and `tile.id` reach the CUDA emitter's comments), else
  /// the kernel.
  Location loc() { return here ? Location(here) : kernel.getLoc(); }
  LocationAttr here;
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
  /// Frees a stage this role's threads read from a load in `block` (of the
  /// tile IR): at the block's first global access or its end, with the
  /// others read there (flushReleases).
  void releaseReadStage(const RingPlan &ring, Value stage, Block *block);
  /// Frees the stages read in `block`: one proxy fence, then their empty
  /// barriers.
  void flushReleases(Block *block);
  /// Whether lowering `op` reads or writes global memory from this thread.
  bool accessesGlobalMemory(Operation *op);
  /// Empty barriers of stages read and not yet freed, by tile-IR block.
  SmallVector<std::pair<Block *, Value>> releasesPending;
  /// Orders this thread's generic-proxy shared-memory accesses before the
  /// async proxy's (tensor cores, bulk copies).
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
  int64_t numWarps() { return plan.layoutWarpsOfRole(role); }
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
  /// Whether layout conversion or transpose `op` goes through this warp's
  /// slice (KernelPlan sized them: movesInWarps).
  bool movesInWarpSlices(Operation *op);
  /// This warp's slice of shared memory.
  Value warpSlice();
  /// Synchronises the threads that meet where a tile moves: the warp's lanes
  /// in its slice (`inWarps`), else the role's threads in its staging area.
  void syncMovers(bool inWarps);
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
  /// Flags between kernels launched side by side (Flags.cpp): `signal`
  /// meets the CTA's threads and releases the value from one of them;
  /// `wait` acquires until the flag holds the value (with a time limit)
  /// and, polled for other roles, counts it passed in shared memory;
  /// `followFlag` is such a role's wait on that count.
  LogicalResult lowerSignal(SignalOp op);
  LogicalResult lowerWait(WaitOp op);
  /// tile.await_earlier, tile.allow_later: the griddepcontrol instruction.
  LogicalResult lowerGridDependency(StringRef instruction);
  void followFlag(const FlagWaitPlan &f);
  /// A shared-memory byte offset as a 64-bit address for inline PTX.
  Value sharedAddress(int64_t byteOffset);
  /// The global address of a flag: one element of a view.
  Value flagAddress(Value view, ValueRange indices);
  /// The address of element `indices` (mapped values) of a view.
  Value elementAddress(const ViewInfo &vi, ArrayRef<Value> indices, Type elem);
  /// A store handed to another role: its writer fills a stage, its copier
  /// copies the stage out row by row.
  LogicalResult lowerRingStore(const StoreRingPlan &ring, StoreOp store);
  /// A tile handed over through a shared ring: its writer stores it into
  /// the stage (waiting for a free one at its first buffer, arriving on full
  /// after its last) once it made it; a reader loads it from the stage in
  /// place of making it (waiting on full at its first, arriving on empty
  /// after its last).
  LogicalResult passSharedBuffer(const SharedRingPlan &ring, Operation *op);
  /// Loads `tile` from, or stores it to, a stage at `base` holding it dense
  /// and row-major in its layout (a scalar: every thread reads it, one
  /// writes it).
  LogicalResult accessDenseStage(Value base, Value tile, bool isLoad);
  /// The copier's part: bulk copies of whole rows inside the store's limits
  /// (plain stores where a row is cut or misaligned).
  void copyStageOut(StoreOp store, Value stage);
  /// A view of a ring stage holding `tile`'s elements dense and row-major.
  ViewInfo denseStage(Value base, TileType tile);
  /// Reads `tile` from a stage its ring swizzled for its readers
  /// (RingPlan::threadSwizzled), in the tile's layout.
  void readSwizzledStage(const RingPlan &ring, Value stage, Value tile);
  /// For an operand read in place (RingPlan::cutsRows): where `load`'s
  /// window crosses its limit, zeroes the stage's rows past it, then fences
  /// and waits for the role, so that the product reads what the masked
  /// load means.
  void zeroRowsPastLimit(const RingPlan &ring, Value stage, tile::LoadOp load);
  /// The same by ldmatrix, 8 x 8 matrices of 16-bit elements at a time,
  /// where the tile's layout `l` is made of them (matrixReads): one
  /// instruction for four matrices, one address a thread, where reading each
  /// element on its own takes an instruction and a swizzled address an
  /// element.
  void readStageMatrices(const RingPlan &ring, Value stage, Value tile, const TileLayout &l,
                         const MatrixReads &reads);
  /// A pointer to element (row, col) of a swizzled stage (RingPlan::threadByte),
  /// with the XOR's operands kept apart so that rows a multiple of 8 apart
  /// share it.
  Value swizzledElement(const RingPlan &ring, Value stage, Value row, Value col, int64_t elemBytes);
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

  /// Lowers `op`, first waiting for a product in flight unless `op` may
  /// run beside it, and waiting at the end of the op's block.
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerOpNow(Operation *op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerProgramIds(ProgramIdsOp op);
  /// A load into `tile` or a store of it; the tile's shape is the window's
  /// `keep` dims.
  LogicalResult lowerAccess(const ViewInfo &vi, ArrayRef<Value> starts, ArrayRef<Value> floors,
                            ArrayRef<Value> limits, ArrayRef<int64_t> keep, bool masked, Value tile,
                            bool isLoad, double other);
  /// lowerAccess with the elements in memory as `mem` (the tile's element
  /// type, or the bytes of an f8e4m3 tile: see memoryType), `other` as a
  /// `mem` value.
  LogicalResult lowerAccessAs(Type mem, const ViewInfo &vi, ArrayRef<Value> starts,
                              ArrayRef<Value> floors, ArrayRef<Value> limits,
                              ArrayRef<int64_t> keep, bool masked, Value tile, bool isLoad,
                              double other);
  /// A cast from or to f8e4m3: pairs of registers through the hardware's
  /// two-element cvt (e4m3x2 <-> f32 pairs, f16x2).
  void lowerFloat8Cast(CastOp op);
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
  /// Moves `input` into `result`'s layout through the staging area (a warp
  /// slice where `inWarps`): every element out row-major, then each thread
  /// reads its result elements, `offsets` further along each dim (a
  /// window; empty for a conversion).
  void restage(Value input, Value result, ArrayRef<int64_t> offsets, bool inWarps);
  Value rowMajor(ArrayRef<Value> coords, ArrayRef<int64_t> shape);
  LogicalResult lowerDot(DotOp op);
  /// A dot under `mma: mma_sync` (WarpProducts.cpp), with the dot it
  /// pairs with: their operands staged, one barrier, both products.
  LogicalResult lowerWarpMmaDot(DotOp op);
  /// Writes a rank-2 tile row-major at `base`, `pitch` elements a row, a
  /// thread's run along a row (up to 16 bytes) in one store.
  void stageRows(Value tile, Value base, int64_t pitch);
  /// Each warp's products of `op` from the staged operands; the result
  /// bound in the fragments or written to its area.
  void multiplyWarpMma(DotOp op, const WarpMmaTiling &t);
  /// An 8 x 8 matrix of 16-bit elements held two a lane, transposed across
  /// the warp (movmatrix.trans).
  Value transposeMatrix(Value word);
  /// Reads a product's f32 result back from the area at `base` (`stride`
  /// elements a row, its element (0, 0) at (rowFrom, colFrom)) in its
  /// layout, adding the tile it accumulates onto.
  void readResultArea(DotOp dot, Value base, int64_t stride, int64_t rowFrom, int64_t colFrom);
  /// The result's registers of a transpose whose result layout is its
  /// input's with the dims permuted alike (tile-assign-layouts makes that
  /// so around accumulator fragments): the input's registers renumbered,
  /// nothing moved. None for any other pair of layouts.
  std::optional<Regs> transposedInRegisters(TransposeOp tr);
  /// Whether transposedInRegisters applies: the layouts differ only in the
  /// order of their dims.
  bool transposesInRegisters(TransposeOp tr);
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
    /// Of those, the stages this product gives back: each copy once.
    SmallVector<const RingOperand *, 3> freed;
    bool aSwizzled = false, bSwizzled = false;
    bool bNMajor = false;
  };
  /// Plans `op`'s product on `warps` warps; where it cannot, fails with the
  /// error at `op`, or silently when `quiet` (a query asked before the op
  /// lowers, which then reports it once).
  FailureOr<Product> planProduct(DotOp op, MmaTiling::Kind kind, int64_t warps, bool quiet = false);
  /// Where the product's descriptors point: its ring stages, or the product
  /// role's staging area.
  std::pair<OperandAt, OperandAt> operandsAt(const Product &p) {
    return {{p.aRing ? p.aRing->base : stagingBase(p.t.aOffset), p.aSwizzled},
            {p.bRing ? p.bRing->base : stagingBase(p.t.bOffset), p.bSwizzled, p.bNMajor}};
  }
  /// Whether `op`'s B is staged N-major: wgmma reads a 16-bit B laid out [K,
  /// N] as it lies (the transpose bit), so its threads store their runs
  /// along N whole instead of gathering K. Not for a B stacked beside
  /// another or kept resident. (A B from a ring is read as the ring lays
  /// it: RingPlan::nMajor.)
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
  /// With `deferWait` (a product with `fragment` or `results`), waits for
  /// nothing: returns each round's accumulators in flight, for
  /// takeAccumulators once the caller waits.
  SmallVector<Value> issueWgmma(const MmaTiling &t, OperandAt a, OperandAt b,
                                Regs *fragment = nullptr, Regs *results = nullptr,
                                const ARegisters *aRegs = nullptr, bool deferWait = false);
  /// `acc` (a wgmma's accumulators) tied to the wait just made, so that
  /// no use of them is moved above it.
  Value waitedAccumulators(Value acc);
  /// Round `round`'s accumulators `acc` into `fragment` or `results`, after
  /// their wait.
  void takeAccumulators(const MmaTiling &t, int64_t round, Value acc, Regs *fragment,
                        Regs *results);
  /// `dot`'s result from columns [from, from + N) of a product's fragment,
  /// plus the dot's accumulator operand if it has one.
  void keepFragmentColumns(DotOp dot, ArrayRef<Value> fragment, int64_t from, const MmaTiling &t);
  /// A wgmma product issued and not yet waited for: what it makes (the
  /// values an op must not read before `finish`), how many commit groups
  /// it issued, and `finish`, which waits until at most `newer` groups are
  /// in flight, takes the accumulators, gives its ring stages back and
  /// binds its results.
  struct PendingProduct {
    SmallVector<Value, 2> results;
    int64_t groups = 0;
    std::function<void(int64_t newer)> finish;
  };
  /// Oldest first: wgmma groups complete in the order they were committed.
  SmallVector<PendingProduct, 2> pendingProducts;
  /// Waits for the pending products up to and including the `last`-th
  /// (all of them by default), oldest first, leaving the later ones in
  /// flight.
  void flushProducts(int64_t last = -1);
  /// The last pending product `op` must wait for, or -1 when it may be
  /// lowered while they are all in flight: register arithmetic, plain
  /// global loads and stores, layout conversions that stay in their warps,
  /// and wgmma products that read only registers and ring stages
  /// (`issuesBesideProducts`). An op reading what a product makes waits
  /// for it (and, as groups complete in order, for those before it);
  /// anything else may touch their operands or shared memory and waits for
  /// all.
  int64_t pendingNeededBy(Operation *op);
  /// Whether `op`'s kind lets it run while products are in flight (what
  /// it reads aside).
  bool runsBesidePending(Operation *op);
  /// Whether `op` is a wgmma product of this role's own that stages
  /// nothing and leaves its result in its accumulators: its A from
  /// registers or a ring, its B from a ring, no pair, no resident.
  bool issuesBesideProducts(DotOp op);
  /// Whether `p` is a wgmma product this role issues itself, not a pair
  /// stacking A: its A may come from registers and its accumulators may be
  /// its results.
  bool ownsAccumulators(const Product &p, MmaTiling::Kind kind);
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
  /// Multiplies the resident's columns by its factor where they are.
  void scaleResident(const ResidentPlan &res);
  /// `S * s + dot(a, b) * t` (ResidentPlan::productFactor), at its sum: the
  /// fragment scaled by s (unless that happened at the mul), then each
  /// register plus the product's, times t.
  void addScaledProduct(const ResidentPlan &res);
  /// Stages a copy of the resident cast to `copyElem` (the operand of a
  /// product planned as `t`) straight from its columns: each lane converts
  /// its row's columns and stores them K-major at `region`, rows from
  /// `rowOffset`.
  void stageResidentOperand(const ResidentPlan &res, Type copyElem, bool isLhs, const MmaTiling &t,
                            int64_t region, bool swizzled, int64_t rowOffset, int64_t part);
  /// The resident `op` (a dot) accumulates onto, or null.
  const ResidentPlan *accumulatesOnto(Operation *op) { return plan.residentUpdatedBy(op); }
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
    /// A slice folded into the dot: the window of `tile` staged (its start
    /// and extent per dim); empty for the whole tile.
    SmallVector<int64_t, 2> offsets, window;
    /// Whether the staged rows run along the tile's last dim (K, or N for
    /// an N-major B): then dim 0 indexes the staged rows.
    bool rowsAlongLast() const { return kLast || nMajor; }
  };
  StagedOperand stagedOperand(Value operand, bool isLhs, const MmaTiling &t, bool nMajor = false);
  /// `elems`, all of one type, as one vector, element by element.
  Value vectorOf(ArrayRef<Value> elems) {
    Value v = LLVM::UndefOp::create(
        b, loc(), VectorType::get({(int64_t)elems.size()}, elems.front().getType()));
    for (auto [j, element] : llvm::enumerate(elems))
      v = LLVM::InsertElementOp::create(b, loc(), v, element, cI32(j));
    return v;
  }
  /// The `vec` registers of `x` (layout `l`) from register index `ri` on
  /// along the tile's last dim, each cast to `elem`, as one vector.
  Value packRun(const TileLayout &l, const Regs &x, ArrayRef<int64_t> ri, int64_t vec, Type elem) {
    SmallVector<Value, 8> run;
    SmallVector<int64_t, 2> rj(ri);
    for (int64_t j = 0; j < vec; ++j, ++rj.back())
      run.push_back(x[l.regNumber(rj)]);
    if (Value whole = wholeVector(run, VectorType::get({vec}, elem)))
      return whole;
    for (Value &element : run)
      element = scalarCast(b, loc(), element, elem);
    return vectorOf(run);
  }
  /// The element type a product's operands are staged as: tf32 operands are
  /// f32 bits (the tensor cores read the top 19), others as they are.
  Type stagedOperandType(const MmaTiling &t) {
    using Operands = MmaTiling::Operands;
    return t.operands == Operands::TF32   ? (Type)b.getF32Type()
           : t.operands == Operands::BF16 ? b.getBF16Type()
                                          : b.getF16Type();
  }
  /// Part `part` of f32 `x` split for a product of bf16 operands
  /// (MmaTiling::splitA): 0 is x cut to bf16 (its top 16 bits, as they
  /// lie: no conversion instruction, and no rounding up past the largest
  /// float), 1 the rest (exact in f32: under 2^-7 of x), rounded: the two
  /// keep x to about 2^-16.
  Value splitPart(Value x, Type split, int64_t part) {
    Type i32 = b.getI32Type();
    Value bits = LLVM::BitcastOp::create(b, loc(), i32, x);
    if (part == 0) {
      Value top = arith::ShRUIOp::create(b, loc(), bits, cI32(16));
      Value half = arith::TruncIOp::create(b, loc(), b.getI16Type(), top);
      return LLVM::BitcastOp::create(b, loc(), split, half);
    }
    Value high = LLVM::BitcastOp::create(
        b, loc(), x.getType(),
        arith::AndIOp::create(b, loc(), bits, cI32(static_cast<int32_t>(0xFFFF0000u))));
    return scalarCast(b, loc(), arith::SubFOp::create(b, loc(), x, high), split);
  }
  /// The 32-bit word of two f32s' high parts (splitPart 0), x0's in its low
  /// half: one byte permute of the two words as they lie. (Built from two
  /// shifted halves, nvcc spends a shift on each and a permute to join them.)
  Value packHighParts(Value x0, Value x1) {
    Type i32 = b.getI32Type();
    return NVVM::PermuteOp::create(b, loc(), i32, LLVM::BitcastOp::create(b, loc(), i32, x0),
                                   LLVM::BitcastOp::create(b, loc(), i32, x1), cI32(0x7632),
                                   NVVM::PermuteMode::DEFAULT);
  }
  /// Part `part` of f32s `x` split (splitPart) as one vector of `split`:
  /// the high parts a word per pair (packHighParts), the rest as elements.
  Value packSplitRun(ArrayRef<Value> x, Type split, int64_t part) {
    int64_t n = x.size();
    if (part == 0 && n % 2 == 0) {
      Value words = LLVM::UndefOp::create(b, loc(), VectorType::get({n / 2}, b.getI32Type()));
      for (int64_t j = 0; j < n / 2; ++j)
        words = LLVM::InsertElementOp::create(b, loc(), words,
                                              packHighParts(x[2 * j], x[2 * j + 1]), cI32(j));
      return LLVM::BitcastOp::create(b, loc(), VectorType::get({n}, split), words);
    }
    Value v = LLVM::UndefOp::create(b, loc(), VectorType::get({n}, split));
    for (int64_t j = 0; j < n; ++j)
      v = LLVM::InsertElementOp::create(b, loc(), v, splitPart(x[j], split, part), cI32(j));
    return v;
  }
  /// Whether the swizzled layout saves bank conflicts staging `operand`.
  bool swizzlePays(Value operand, bool isLhs, const MmaTiling &t, bool nMajor = false);
  /// Stages a tensor-core operand (the dot's lhs when `isLhs`) K-major at `region`
  /// of the staging area, its first row at staged row `rowOffset` (a
  /// multiple of 8); a split A (MmaTiling::splitA) as both its parts.
  void stageMmaOperand(Value operand, bool isLhs, const MmaTiling &t, int64_t region, bool swizzled,
                       int64_t rowOffset = 0, bool nMajor = false);
  /// stageMmaOperand's stores from the registers: part `part` of a split A
  /// at `region`, or the whole operand.
  void stageMmaOperandPart(const StagedOperand &o, bool isLhs, const MmaTiling &t, int64_t region,
                           bool swizzled, int64_t rowOffset, bool nMajor, int64_t part);
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

/// Whether `v` is provably a multiple of `n` (constants, and products or
/// sums of such).
inline bool knownMultipleOf(Value v, int64_t n) {
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

// f8e4m3 bytes in 16-bit words (Float8Pairs.cpp).
/// The 16-bit word holding registers lo and hi when they are bytes 2k and
/// 2k + 1 of one vector of bytes, as a vector<2xi8>; null otherwise.
Value bytePairWord(OpBuilder &b, Location l, Value lo, Value hi);
/// Registers that are byte pairs, in order, as a vector of 16-bit words;
/// null when they are not.
Value bytesFromPairs(OpBuilder &b, Location l, ArrayRef<Value> bytes);

} // namespace kiln::nvvm

#endif
