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
  return {AccessKind::Strided, gep(elem, first, llvm::ConstantVector::get(steps))};
}

llvm::Value* Emitter::emit_load(const ir::Load* l) {
  const BoundBuffer& buf = lookup_buffer(l->tensor);
  llvm::Type* elem = llvm_type(l->type);
  llvm::Align align(ir::bytes(l->type));
  if (!vector_)
    return b_.CreateAlignedLoad(elem, element_ptr(buf, l->indices), align);
  Access access = analyze_access(buf, l->indices);
  auto* vec = llvm::FixedVectorType::get(elem, vector_->lanes);
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
      return b_.CreateMaskedGather(vec, access.ptr, align, mask_, none);
    }
  }
  switch (access.kind) {
  case AccessKind::Uniform:
    return b_.CreateAlignedLoad(elem, access.ptr, align);
  case AccessKind::Contiguous:
    return b_.CreateAlignedLoad(vec, access.ptr, align);
  case AccessKind::Strided:
    return b_.CreateMaskedGather(vec, access.ptr, align);
  }
  kiln_unreachable("unknown access kind");
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
