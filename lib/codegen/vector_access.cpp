#include "emitter.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/linear_form.h"
#include "kiln/support/error.h"

namespace kiln::codegen {

using ir::Expr;

const Emitter::BoundBuffer& Emitter::lookup_buffer(const std::string& name) {
  for (size_t i = buffers_.size(); i-- > 0;)
    if (buffers_[i].buffer.name == name)
      return buffers_[i];
  kiln_unreachable(("no buffer named " + name + " in scope").c_str());
}

llvm::Value* Emitter::element_ptr(const BoundBuffer& buf, const std::vector<Expr>& indices) {
  KILN_ASSERT(indices.size() == buf.buffer.shape.size(), "index count matches buffer rank");
  return gep(llvm_type(buf.buffer.dtype), buf.base, flat_offset(buf, indices));
}

llvm::Value* Emitter::lane_numbers(llvm::Type* type) {
  std::vector<llvm::Constant*> lanes;
  for (unsigned i = 0; i < vector_->lanes; ++i)
    lanes.push_back(llvm::ConstantInt::get(type, vector_->first + i));
  return llvm::ConstantVector::get(lanes);
}

llvm::Value* Emitter::widen(llvm::Value* v) {
  if (!vector_ || v->getType()->isVectorTy())
    return v;
  return b_.CreateVectorSplat(vector_->lanes, v);
}

void Emitter::match_lanes(llvm::Value*& a, llvm::Value*& b) {
  if (a->getType()->isVectorTy() != b->getType()->isVectorTy()) {
    a = widen(a);
    b = widen(b);
  }
}

llvm::Type* Emitter::like(llvm::Value* like_value, llvm::Type* scalar) {
  if (auto* vt = llvm::dyn_cast<llvm::VectorType>(like_value->getType()))
    return llvm::VectorType::get(scalar, vt->getElementCount());
  return scalar;
}

Emitter::Access Emitter::analyze_access(const BoundBuffer& buf, const std::vector<Expr>& indices) {
  std::int64_t stride = 0, row = 1;
  bool affine = true;
  for (size_t d = indices.size(); d-- > 0;) {
    auto form = ir::linearize_with_atoms(indices[d]);
    if (!form || form->atoms_use(vector_->var))
      affine = affine && !ir::uses_var(indices[d], vector_->var);
    else
      stride += form->linear.coeff(vector_->var) * row;
    row *= buf.buffer.shape[d];
  }
  llvm::Type* elem = llvm_type(buf.buffer.dtype);
  if (!affine) {
    llvm::Value* offsets = widen(flat_offset(buf, indices));
    return {AccessKind::Strided, gep(elem, buf.base, offsets)};
  }
  // The address of lane 0, with the lane variable at its first value and
  // scalar code.
  const std::int64_t first_lane = vector_->first;
  auto saved = vector_;
  vars_.push_back({saved->var, b_.getInt64(first_lane)});
  vector_.reset();
  llvm::Value* first = element_ptr(buf, indices);
  vector_ = saved;
  vars_.pop_back();
  if (stride == 0)
    return {AccessKind::Uniform, first};
  if (stride == 1)
    return {AccessKind::Contiguous, first};
  // Offsets from lane 0's element: lane × stride (lanes counted from the
  // chunk's start, not from the loop's).
  std::vector<llvm::Constant*> steps;
  for (unsigned i = 0; i < vector_->lanes; ++i)
    steps.push_back(b_.getInt64(static_cast<std::int64_t>(i) * stride));
  return {AccessKind::Strided, gep(elem, first, llvm::ConstantVector::get(steps)), first, stride};
}

llvm::Value* Emitter::zero_block() {
  constexpr const char* kName = "kiln.zeros";
  if (llvm::GlobalVariable* g = module_.getNamedGlobal(kName))
    return g;
  auto* type = llvm::ArrayType::get(b_.getInt8Ty(), kZeroBytes);
  auto* g = new llvm::GlobalVariable(module_, type, /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage,
                                     llvm::ConstantAggregateZero::get(type), kName);
  g->setAlignment(llvm::Align(64));
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return g;
}

llvm::Value* Emitter::emit_load(const ir::Load* l, llvm::Value* zeros_unless) {
  const BoundBuffer& buf = lookup_buffer(l->tensor);
  llvm::Type* elem = llvm_type(l->type);
  const std::int64_t elem_bytes = ir::bytes(l->type);
  llvm::Align align(elem_bytes);
  if (!vector_) {
    llvm::Value* ptr = element_ptr(buf, l->indices);
    if (zeros_unless)
      ptr = b_.CreateSelect(zeros_unless, ptr, zero_block());
    return b_.CreateAlignedLoad(elem, ptr, align);
  }
  Access access = analyze_access(buf, l->indices);
  auto* vec = llvm::FixedVectorType::get(elem, vector_->lanes);
  if (zeros_unless) {
    // The zeros stand in for every element the load reads: the lanes' span
    // (a whole vector, or the vectors a small stride spans) from lane 0's.
    const std::int64_t lanes = vector_->lanes;
    std::int64_t span = 1;
    if (access.kind == AccessKind::Contiguous)
      span = lanes;
    else if (access.first && access.stride > 0)
      span = (lanes - 1) * access.stride + 1;
    if (span * elem_bytes > kZeroBytes)
      return nullptr;
    llvm::Value* zeros = zero_block();
    if (access.kind == AccessKind::Strided) {
      // Every lane of a gather reads the block's first element.
      access.ptr = b_.CreateSelect(zeros_unless, access.ptr, b_.CreateVectorSplat(lanes, zeros));
      if (access.first)
        access.first = b_.CreateSelect(zeros_unless, access.first, zeros);
    } else {
      access.ptr = b_.CreateSelect(zeros_unless, access.ptr, zeros);
    }
  }
  if (mask_) {
    // Only the active lanes may touch memory.
    llvm::Value* none = llvm::Constant::getNullValue(vec);
    switch (access.kind) {
    case AccessKind::Uniform:
      return b_.CreateMaskedGather(vec, b_.CreateVectorSplat(vector_->lanes, access.ptr), align,
                                   mask_, none);
    case AccessKind::Contiguous:
      return b_.CreateMaskedLoad(vec, access.ptr, align, mask_, none);
    case AccessKind::Strided:
      if (llvm::Value* v = emit_deinterleaved_load(elem, access, align))
        return v;
      return b_.CreateMaskedGather(vec, access.ptr, align, mask_, none);
    }
  }
  switch (access.kind) {
  case AccessKind::Uniform:
    return b_.CreateAlignedLoad(elem, access.ptr, align);
  case AccessKind::Contiguous:
    return b_.CreateAlignedLoad(vec, access.ptr, align);
  case AccessKind::Strided:
    if (llvm::Value* v = emit_deinterleaved_load(elem, access, align))
      return v;
    return b_.CreateMaskedGather(vec, access.ptr, align);
  }
  kiln_unreachable("unknown access kind");
}

llvm::Value* Emitter::emit_deinterleaved_load(llvm::Type* elem, const Access& access,
                                              llvm::Align align) {
  // A gather costs about one load per lane; for a stride of 2 to 4 (a
  // strided conv's input row, a window of a pooling), whole vectors and a
  // shuffle are what LLVM's loop vectorizer emits for interleaved groups,
  // and X86 lowers the shuffle to two or three instructions.
  constexpr std::int64_t kMaxStride = 4;
  const unsigned lanes = vector_->lanes;
  if (!access.first || access.stride < 2 || access.stride > kMaxStride || lanes < 2)
    return nullptr;
  // The span from lane 0's element to the last lane's, in vectors of
  // `lanes`: the last vector ends where the span ends (it may overlap the
  // one before), so no element past the last lane's is read.
  const std::int64_t span = (static_cast<std::int64_t>(lanes) - 1) * access.stride + 1;
  const std::int64_t chunks = (span + lanes - 1) / lanes;
  auto start_of = [&](std::int64_t c) { return c + 1 < chunks ? c * lanes : span - lanes; };
  auto* vec = llvm::FixedVectorType::get(elem, lanes);
  std::vector<llvm::Value*> parts;
  for (std::int64_t c = 0; c < chunks; ++c) {
    llvm::Value* ptr = gep(elem, access.first, b_.getInt64(start_of(c)));
    if (!mask_) {
      parts.push_back(b_.CreateAlignedLoad(vec, ptr, align));
      continue;
    }
    // Under a mask, a vector reads only the elements of active lanes:
    // position p holds element start + p, lane (start + p) / stride's when
    // the stride divides it; every other position reads nothing (a lane
    // of the all-false second operand).
    std::vector<int> pick;
    for (unsigned p = 0; p < lanes; ++p) {
      const std::int64_t e = start_of(c) + p;
      pick.push_back(e % access.stride == 0 ? static_cast<int>(e / access.stride)
                                            : static_cast<int>(lanes));
    }
    llvm::Value* none = llvm::Constant::getNullValue(mask_->getType());
    llvm::Value* chunk_mask = b_.CreateShuffleVector(mask_, none, pick);
    parts.push_back(
        b_.CreateMaskedLoad(vec, ptr, align, chunk_mask, llvm::Constant::getNullValue(vec)));
  }
  // Concatenated pairwise into one vector of chunks x lanes (padded with
  // poison to a power of two), then one shuffle picks the lanes.
  while (parts.size() > 1) {
    if (parts.size() % 2 != 0)
      parts.push_back(llvm::PoisonValue::get(parts.back()->getType()));
    std::vector<llvm::Value*> joined;
    for (std::size_t i = 0; i < parts.size(); i += 2) {
      const unsigned n = llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements();
      std::vector<int> both(2 * n);
      for (unsigned k = 0; k < 2 * n; ++k)
        both[k] = static_cast<int>(k);
      joined.push_back(b_.CreateShuffleVector(parts[i], parts[i + 1], both));
    }
    parts = std::move(joined);
  }
  std::vector<int> pick;
  for (unsigned lane = 0; lane < lanes; ++lane) {
    const std::int64_t e = lane * access.stride;
    const std::int64_t last = (chunks - 1) * lanes;
    pick.push_back(static_cast<int>(e < last ? e : last + e - start_of(chunks - 1)));
  }
  return b_.CreateShuffleVector(parts.front(), pick);
}

llvm::Value* Emitter::safe_divisor(llvm::Value* d) {
  // A divisor the same in every lane divides as scalar code would; the
  // operands of a vector one were already made vectors alike.
  if (!mask_ || !vector_ || !d->getType()->isVectorTy())
    return d;
  return b_.CreateSelect(mask_, d, llvm::ConstantInt::get(d->getType(), 1));
}

llvm::Value* Emitter::gep(llvm::Type* elem, llvm::Value* base, llvm::Value* offset) {
  return mask_ ? b_.CreateGEP(elem, base, offset) : b_.CreateInBoundsGEP(elem, base, offset);
}

llvm::Value* Emitter::flat_offset(const BoundBuffer& buf, const std::vector<Expr>& indices) {
  llvm::Value* offset = nullptr;
  for (size_t d = 0; d < indices.size(); ++d) {
    llvm::Value* idx = emit_expr(indices[d]);
    if (!offset) {
      offset = idx;
      continue;
    }
    llvm::Value* scale =
        llvm::ConstantInt::get(idx->getType()->isVectorTy() || offset->getType()->isVectorTy()
                                   ? like(widen(offset), b_.getInt64Ty())
                                   : b_.getInt64Ty(),
                               buf.buffer.shape[d]);
    llvm::Value* o = offset;
    match_lanes(o, idx);
    offset = b_.CreateAdd(b_.CreateMul(o, scale, "", false, true), idx, "", false, true);
  }
  return offset ? offset : b_.getInt64(0);
}

} // namespace kiln::codegen
