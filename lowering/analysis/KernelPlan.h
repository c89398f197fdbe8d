//===- KernelPlan.h - warp roles and copy pipelines of a kernel -*- C++ -*-===//
//
// What a schedule's `roles` and `pipelines` mean for one kernel, worked out
// once: which ops each role runs (the ops it owns plus everything they need),
// which loads travel through a shared-memory ring filled by TMA, where the
// rings and their mbarriers sit in dynamic shared memory, and how many
// registers each role gets. tile-assign-layouts, convert-tile-to-nvvm and the
// manifest builder all ask this plan, so they cannot disagree; only what
// depends on thread layouts (a ring swizzled for its readers) is known once
// they are assigned, and the lowered kernel reports its tensor maps.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LOWERING_ANALYSIS_KERNELPLAN_H
#define KILN_LOWERING_ANALYSIS_KERNELPLAN_H

#include "dsl/TileDialect.h"
#include "lowering/analysis/MmaTiling.h"

#include "llvm/ADT/DenseSet.h"

namespace kiln {

/// Where a ring of shared-memory stages lies: `depth` stages from `offset`,
/// `stageStride` apart, and one full and one empty mbarrier per stage.
struct RingStages {
  int64_t depth = 1;
  int64_t stageBytes = 0;    // one tile, as the copies write or read it
  int64_t stageStride = 0;   // stageBytes rounded up to the ring alignment
  int64_t offset = 0;        // stage 0, in dynamic shared memory
  int64_t barrierOffset = 0; // full[0..depth) then empty[0..depth), 8 bytes each
};

/// A load whose tiles a TMA engine copies into a ring of shared-memory
/// stages.
struct RingPlan : RingStages {
  tile::LoadOp load;
  std::string pipeline;
  unsigned viewArg = 0;               // kernel argument the copies read
  llvm::SmallVector<int64_t> box;     // per view dim, outermost first
  unsigned issuer = 0;                // role that issues the copies
  int64_t consumerThreads = 0;        // threads that arrive on an empty barrier
  llvm::SmallVector<bool> consumedBy; // per role
  /// The first role reading the stages (the one, for a tensor-core operand).
  unsigned firstReader() const { return llvm::find(consumedBy, true) - consumedBy.begin(); }
  /// Non-zero when the ring's tile is a tensor-core operand read where it
  /// lands: the copies write it in the swizzled K-major layout the MMA reads
  /// (see MmaTiling), `kBlocks` boxes of `swizzleBytes` of every row, K block
  /// j at j * kBlockStride; its dot releases the stage after the product. The
  /// second operand of a stacked pair shares the first's stages, its rows
  /// below the first's (`offset` points at them).
  int64_t swizzleBytes = 0, kBlocks = 1, kBlockStride = 0;
  /// The stages are swizzled for the threads that read them instead (128-
  /// byte swizzle, `kBlocks` boxes of 128 bytes a row): chosen where it
  /// serves their reads in fewer shared-memory wavefronts than the dense
  /// tile (planSwizzledReads); threadByte() places an element.
  bool threadSwizzled = false;
  bool mmaOperand() const { return swizzleBytes != 0 && !threadSwizzled; }
  /// Byte of element (row, col) of a thread-swizzled stage (row: the tile's
  /// leading dims flattened): its box, its 128-byte row there, and its
  /// 16-byte piece XORed with row % 8, as TMA's 128-byte swizzle writes it.
  int64_t threadByte(int64_t row, int64_t col, int64_t elemBytes) const {
    int64_t boxElems = swizzleBytes / elemBytes;
    return col / boxElems * kBlockStride + row * swizzleBytes +
           ((col % boxElems * elemBytes) ^ ((row % 8) << 4));
  }
  /// An operand read in place whose load stops at a limit inside the
  /// tensor along the tile's first dim (a packed sequence's end): the copy
  /// brings the whole box, so the reader zeroes the stage's rows past the
  /// limit before the product, as the masked load reads zeros there.
  bool cutsRows = false;
  /// A 16-bit B that wgmma reads N-major (MmaTiling::nMajorSwizzleBytes):
  /// the tile as it lies, its rows K's, and the blocks above run along N.
  bool nMajor = false;
  /// Where several products read the stage in place (unpaired, alike, in
  /// one block): the last of them, which alone gives the stage back. Null
  /// where one product (or a pair) reads it.
  mlir::Operation *lastReader = nullptr;
  /// Under tcgen05 an operand stage is freed by the product itself: the
  /// issuing thread's tcgen05.commit is its empty mbarrier's one arrival.
  bool freedByCommit = false;
  /// A pipeline of several buffers: each has its stages and empty barriers,
  /// but their copies all land on the full barriers of the group's first
  /// load (`leader`, an index into KernelPlan::rings; its own for that
  /// one), which expects `groupBytes`. So a reader waits once a stage for
  /// all of them: at the group's first load it reads (`waitsFull`, per role).
  unsigned leader = 0;
  int64_t groupBytes = 0;
  llvm::SmallVector<bool> waitsFull;
};

/// A store whose tiles the computing role hands, through a ring of
/// shared-memory stages, to the role that owns the store, which copies each
/// stage out with bulk copies (`cp.async.bulk`, one per row of the tile, rows
/// masked by the store's limits). One full mbarrier per stage (the writer's
/// threads arrive after they wrote it) and one empty (the copying thread
/// arrives once the copies have read it).
struct StoreRingPlan : RingStages {
  tile::StoreOp store;
  std::string pipeline;
  unsigned issuer = 0; // the role owning the store: copies the stages out
  unsigned writer = 0; // the computing role that fills them
};

/// A `copy: shared` pipeline: tiles one computing role (the writer, the
/// role listing them) makes and other roles read, handed over through a
/// ring of shared-memory stages, each holding one of every buffer. The
/// writer waits for a free stage at its first buffer, stores each buffer
/// in the tile's layout where it is made, and its threads arrive on the
/// stage's full mbarrier after the last; a reader waits on full at the
/// first buffer it reads, loads each into the same layout in place of
/// making it, and its threads arrive on the empty mbarrier after the last
/// it reads. So a reading role runs none of the ops that make the buffers.
struct SharedRingPlan : RingStages {
  std::string pipeline;
  llvm::SmallVector<mlir::Operation *, 4> buffers; // in block order
  llvm::SmallVector<int64_t, 4> bufferOffsets;     // of each, in a stage
  /// Per buffer, the conversion (kRingReadAttr) that readers of another
  /// warp count than the writer's read the stage into, or null.
  llvm::SmallVector<mlir::Operation *, 4> readers;
  unsigned writer = 0;
  int64_t readerThreads = 0; // threads that arrive on an empty barrier
  /// Per role, per buffer: whether the role writes it (the writer: every
  /// one) or reads it (a reader: those it needs).
  llvm::SmallVector<llvm::SmallVector<bool, 4>> touches;
  /// Index of `op` among the buffers (or their readers' conversions), or
  /// -1.
  int indexOf(mlir::Operation *op) const {
    if (auto it = llvm::find(buffers, op); it != buffers.end())
      return it - buffers.begin();
    auto it = op ? llvm::find(readers, op) : readers.end();
    return it == readers.end() ? -1 : it - readers.begin();
  }
  /// The first and the last buffer role `r` touches (-1: none): where it
  /// waits for the stage and where it gives the stage on.
  int first(unsigned r) const {
    for (size_t i = 0; i < buffers.size(); ++i)
      if (touches[r][i])
        return i;
    return -1;
  }
  int last(unsigned r) const {
    for (int i = buffers.size() - 1; i >= 0; --i)
      if (touches[r][i])
        return i;
    return -1;
  }
};

/// A loop-carried tile the schedule keeps where the tensor cores accumulate:
/// tensor-memory columns under tcgen05 (`tensor_memory: [S]`), or under
/// wgmma (`registers: [S]`) the update product's accumulator fragment,
/// carried through the loop in registers. It holds the tile from before the
/// loop to after it. In the loop it is only scaled in place by a scalar,
/// accumulated onto by one product (`S * s + dot(a, b)`), and cast for other
/// products' operands, which are staged straight from where it lies; after
/// the loop it is read back into the tile's own layout for whatever uses it.
struct ResidentPlan {
  std::string name;
  bool inRegisters = false; // the wgmma fragment; tensor memory otherwise
  mlir::Operation *loop = nullptr;
  unsigned index = 0; // of the loop's carried values
  tile::DotOp update; // the product accumulated onto it
  /// What it is scaled by before the update, or null: a rank-0 tile, or
  /// (in registers) a tile of its shape broadcast from one factor a row,
  /// `x * r[:, None]`, as an online softmax rescales its running sums.
  mlir::Value factor;
  bool rowFactor = false;                           // the factor is a tile, one value a row
  mlir::Operation *scale = nullptr, *sum = nullptr; // the mul (or null) and the add
  /// (In registers) what the product is scaled by before it is added, or
  /// null: `S * s + dot(a, b) * t`, t a rank-0 tile. The product then runs
  /// into accumulators of its own, and the sum adds it, times t, onto the
  /// fragment (an f16 update whose operands were scaled by 1 / t to stay in
  /// f16's range). `productScale` is that mul.
  mlir::Value productFactor;
  mlir::Operation *productScale = nullptr;
  /// Held in registers and every product reading a copy of it issued before
  /// the mul: the fragments are scaled where the mul is, while those
  /// products run, not on the way to the update.
  bool scalesAtMul = false;
  /// Held in registers, and its value before the loop and after it lie in
  /// the fragment's layout (AssignLayouts gives them that where it can):
  /// it comes in and goes out register for register, and takes no rows of
  /// the staging area.
  bool inFragmentLayout = false;
  unsigned role = 0; // the computing role that carries it
  int64_t columnOffset = 0, columns = 0;
};

/// A `wait` on a flag (tile.wait) whose role polls it for other roles: the
/// role listing it spins on the flag in global memory and then counts it
/// seen in a shared i32 at `progressOffset`; each role in `followers` (one
/// that reads global memory after the wait: it issues copies or loads)
/// waits there until the count reaches its own, a shared-memory read. So
/// the flag's round trip to L2 leaves the copies' issue path, and the
/// poller runs as far ahead as the flags allow.
struct FlagWaitPlan {
  tile::WaitOp wait;
  llvm::SmallVector<unsigned, 1> followers;
  int64_t progressOffset = -1; // -1: no follower
};

struct RolePlan {
  std::string name;
  /// The kernel's schedule as this role's products see it: its `mma` is the
  /// role's own where the role sets one.
  tile::ScheduleAttr schedule;
  llvm::StringRef mma() const { return schedule.getMma().getValue(); }
  int64_t firstWarp = 0, numWarps = 0, regs = 0;
  /// Owns only copies: one thread of the role runs it.
  bool copyOnly = false;
  /// Issues the tensor-core products of role `serves` (`issues: mma`): it
  /// runs their loops and waits, never their operands. The served role
  /// names its issuer in `issuer` (-1: it issues its own).
  bool issuesMma = false;
  int serves = -1, issuer = -1;
  /// Whether the role's tiles are distributed over its warps (it computes).
  bool computes() const { return !copyOnly && !issuesMma; }
  /// The kernel's ops (at any depth) this role lowers.
  llvm::DenseSet<mlir::Operation *> runs;
  /// Per loop the role runs, which of its carried values it carries (the
  /// others it neither reads nor computes).
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<bool>> carried;
  bool carries(mlir::Operation *loop, unsigned i) const {
    auto it = carried.find(loop);
    return it != carried.end() && i < it->second.size() && it->second[i];
  }
  /// Where this role's ops that move a tile through shared memory (dot,
  /// transpose, cumsum, layout conversions) stage it, in dynamic shared
  /// memory; the largest such op sets the size.
  int64_t stagingOffset = 0, stagingBytes = 0;
  /// Layout conversions that move no element between warps go through a
  /// slice of `warpSliceBytes` per warp, from `warpSlicesOffset` on, apart
  /// from the staging area: each warp then synchronises only itself.
  int64_t warpSlicesOffset = 0, warpSliceBytes = 0;
  /// tcgen05 dots: the role's accumulator columns start here in the CTA's
  /// tensor memory, and their completion arrives on the mbarrier at
  /// `mmaBarrierOffset` in dynamic shared memory (-1: the role has none).
  int64_t tmemColumnOffset = 0, tmemColumns = 0;
  int64_t mmaBarrierOffset = -1;
  /// Served by an issuing role: the role's threads arrive on the mbarrier
  /// at `mmaReadyOffset` once a product's operands are staged; the issuer
  /// arrives on `mmaBarrierOffset` once the product is done.
  int64_t mmaReadyOffset = -1;
};

/// The row-major shape a transpose stages its input in: the last dim
/// padded by 16 bytes. Rows stay 16-byte aligned for vector stores, and the
/// transposed reads, which walk down a column, spread over 4 times as many
/// banks (a warp reading 8 rows x 4 columns hit 4 banks, 8 lanes each).
llvm::SmallVector<int64_t, 2> transposeStagingShape(tile::TileType input);

/// Whether `op`, a layout conversion or a transpose through shared memory
/// (not folded into tensor-core products under `mma`, not a renaming of
/// registers), keeps every element in the warp holding it on a role of
/// `warps` warps, and a slice of its staging per warp takes at most
/// kWarpSlicesBytes in all; false for any other op. tile-assign-layouts
/// ran.
bool movesInWarps(mlir::Operation *op, llvm::StringRef mma, int64_t warps);
inline constexpr int64_t kWarpSlicesBytes = 64 * 1024;

/// Where a slice's window stays in the registers holding it
/// (windowRegisters of the assigned layouts): per register of the result,
/// the input's; nothing before tile-assign-layouts or where it moves.
std::optional<llvm::SmallVector<int64_t>> slicedInRegisters(tile::SliceOp slice);

/// Shared memory `op` stages its operands in when a role of `warps` warps
/// runs it under the schedule's matrix instruction `mma`; 0 when it needs
/// none. Operands for which `readInPlace` holds (a TMA ring brings them in
/// the product's layout) take none.
int64_t stagingBytesOf(mlir::Operation *op, llvm::StringRef mma, int64_t warps,
                       llvm::function_ref<bool(mlir::Value)> readInPlace = nullptr);
/// Tensor-memory columns `op`'s accumulators take under `mma` (tcgen05
/// dots), 0 for anything else.
int64_t tensorMemoryColumnsOf(mlir::Operation *op, llvm::StringRef mma, int64_t warps);

struct KernelPlan {
  tile::ScheduleAttr schedule;       // the kernel's (a role's own: RolePlan::schedule)
  llvm::SmallVector<RolePlan> roles; // at least one
  llvm::SmallVector<RingPlan, 2> rings;
  llvm::SmallVector<StoreRingPlan, 1> storeRings;
  llvm::SmallVector<SharedRingPlan, 1> sharedRings;
  llvm::SmallVector<ResidentPlan, 1> residents;
  llvm::SmallVector<FlagWaitPlan, 1> flagWaits;
  int64_t warps = 1;        // of the CTA
  int64_t layoutWarps = 1;  // warps of the widest computing role
  int64_t launchRegs = 0;   // per thread at launch (0: no cap)
  bool reallocRegs = false; // roles change their registers with setmaxnreg
  int64_t persistent = 0;   // resident CTAs per SM; 0: one CTA per grid point
  int64_t dynamicSharedBytes = 0;
  /// Tensor memory the CTA allocates at entry (a power of two >= 32
  /// columns; 0: none) and where, in dynamic shared memory, the allocation
  /// writes its address.
  int64_t tmemColumns = 0, tmemSlotOffset = 0;

  /// Plans a scheduled kernel; errors are emitted on the kernel or the op.
  static mlir::FailureOr<KernelPlan> build(tile::KernelOp kernel);
  /// The warps a product of role `r` is planned on (MmaTiling::get): under
  /// wgmma a served role's products run on its issuer's warpgroups, and
  /// that plan lays out the operands the served role stages.
  int64_t productWarps(unsigned r, bool wgmma) const {
    const RolePlan &rp = roles[r];
    return wgmma && rp.issuer >= 0 ? roles[rp.issuer].numWarps : rp.numWarps;
  }
  /// The matrix instruction `op` multiplies with: that of the computing
  /// roles running it (they agree on a dot), else the schedule's.
  llvm::StringRef mmaOf(mlir::Operation *op) const;
  /// Whether computing role `r` makes tile `v`: it runs v's op or carries
  /// it through a loop; a `copy: shared` ring's buffer only its writer
  /// makes (a reader loads it as the writer laid it out).
  bool makes(unsigned r, mlir::Value v) const;
  /// The warps the layout of tile `v` spans: those of the computing role
  /// making it (roles of one warp count make a tile), else layoutWarps.
  int64_t layoutWarpsOf(mlir::Value v) const;
  /// The warps the tiles of role `r` span: its own where it computes.
  int64_t layoutWarpsOfRole(unsigned r) const {
    return roles[r].computes() ? roles[r].numWarps : layoutWarps;
  }
  /// The plan of `wait`, or null.
  const FlagWaitPlan *flagWaitOf(mlir::Operation *wait) const;
  /// The ring that carries `load`, or null.
  const RingPlan *ringOf(mlir::Operation *load) const;
  /// The store ring that carries `store`, or null.
  const StoreRingPlan *storeRingOf(mlir::Operation *store) const;
  /// The shared ring carrying the tile `op` makes, or null.
  const SharedRingPlan *sharedRingOf(mlir::Operation *op) const;
  /// The resident tile carried as value `index` of `loop`, or null.
  const ResidentPlan *residentOf(mlir::Operation *loop, unsigned index) const;
  /// The resident tile whose update (the product, its scale or its sum) or
  /// operand copy `op` is, or null.
  const ResidentPlan *residentTouchedBy(mlir::Operation *op) const;
  /// The resident tile `op` (a dot) accumulates onto, or null. (A product
  /// scaled before its sum, `productFactor`, accumulates onto nothing.)
  const ResidentPlan *residentUpdatedBy(mlir::Operation *op) const {
    const ResidentPlan *res = residentTouchedBy(op);
    return res && res->update == op && !res->productFactor ? res : nullptr;
  }
  /// Whether the product of `op` (a dot), alone or with the dot it pairs
  /// with, stages in the whole layout of one staging both operands even
  /// where a ring brings one: a tensor-memory resident's update, whose
  /// columns pass through the result rows. (A resident in registers comes
  /// in and goes out outside its loop, through rows at the area's start:
  /// GpuKernelLowering::residentTiling.)
  bool stagesWholeLayout(mlir::Operation *op) const;
  /// The tensor-core tiling of resident `res`'s update, on its role's
  /// warps: wgmma for one in registers, tcgen05 for one in tensor memory.
  mlir::FailureOr<MmaTiling> updateTiling(const ResidentPlan &res, std::string &why) const;
  /// Whether tensor-core product `dot` (wgmma, on `warps` warps) stages
  /// nothing in shared memory, as the lowering plans it: A from registers
  /// (a fragment, or a copy of a `registers:` resident) or in place in its
  /// ring, B (and a pair's stacked operand) in place, the result kept in
  /// the accumulators (a fragment, or a resident that meets no staging).
  bool stagesNothing(tile::DotOp dot, int64_t warps) const;
  /// Places `t`'s staging areas for a wgmma product its own role issues
  /// (`pair` when it runs paired): no A area where A is read from the
  /// registers holding it, nor for an operand read in place from a ring.
  /// The lowering and the staging area's size agree through this.
  void placeOwnProductStaging(tile::DotOp dot, const std::optional<DotPair> &pair, MmaTiling &t,
                              bool aInPlace, bool bInPlace) const;
  /// The staging bytes such a product needs, alone or paired: its placed
  /// areas, and the result rows only where the result is read back.
  int64_t ownProductStagingBytes(tile::DotOp dot, int64_t warps,
                                 llvm::function_ref<bool(mlir::Value)> readInPlace) const;
  /// Whether product `dot`, tiled as `t` (wgmma), reads A from this
  /// thread's registers: round r of warpgroup wg multiplies rows 64 (wg + r
  /// * warpgroups) with no column parts, which the lhs holds there (a
  /// fragment, or a cast of a `registers:` resident held alike).
  bool readsARegisters(tile::DotOp dot, const MmaTiling &t) const;
  /// Whether a slice is staged by the tensor-core dots it feeds (all its
  /// users) straight from its input's registers, so it is never lowered on
  /// its own (GpuKernelLowering::stagedOperand); a window of a resident is
  /// not (its registers are the resident's).
  bool foldsSlice(tile::SliceOp slice, tile::ScheduleAttr schedule) const;
  /// Whether `dot`'s result (and `pair`'s second's) lie as `t`'s
  /// accumulators do: it stays in them.
  bool resultInFragment(tile::DotOp dot, const std::optional<DotPair> &pair,
                        const MmaTiling &t) const;
  /// Whether role `r` reads `ring`'s stages: it uses the tile, or issues
  /// the products of the role it serves and so reads their operands in
  /// place.
  bool readsRing(const RingPlan &ring, unsigned r) const {
    return ring.consumedBy[r] || (roles[r].issuesMma && ring.mmaOperand());
  }
  bool multiRole() const { return roles.size() > 1; }
};

/// Byte alignment of ring stages in shared memory (TMA destinations).
constexpr int64_t kRingAlignment = 128;

struct TileLayout;
/// Shared-memory wavefronts that warp 0 of a role spends reading a tile in
/// layout `l`, one access per `vec` elements along its last dim: per phase
/// of lanes (all 32 for accesses of up to 4 bytes, 16 for 8, 8 for 16), the
/// most distinct 4-byte words one bank must serve. `byteOf(row, col)`
/// places element (row, col), row being the leading dims flattened. How
/// KernelPlan decides whether a ring is swizzled for its readers.
int64_t sharedReadWavefronts(const TileLayout &l, int64_t elemBytes, int64_t vec,
                             llvm::function_ref<int64_t(int64_t, int64_t)> byteOf);
/// Elements one shared-memory access moves when threads in layout `l` read
/// a stage of the tile row-major (dense or swizzled): their run along the
/// last dim, at most 16 bytes, dividing the row.
int64_t stageReadVector(const TileLayout &l, int64_t elemBytes);

/// Points `diag` at the first of `keys` the schedule's YAML wrote (a note
/// "the schedule sets it here").
void noteScheduleLine(mlir::InFlightDiagnostic &diag, tile::ScheduleAttr schedule,
                      llvm::ArrayRef<llvm::StringRef> keys);

} // namespace kiln

#endif
