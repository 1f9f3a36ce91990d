// The matmul and dense templates: TVM's x86 dense_pack schedule in kiln
// steps.
//
//   tile_y, tile_x: i and j in three levels (outer, middle, register tile);
//                   the register tile is yi × xi, xi vectorized
//   tile_k:         k in two levels (ko, ki)
//   reorder_inner:  [ko, ki, yi, xi] or [ko, yi, ki, xi] inside the tile
//   ann_yi, ann_ki: unroll the tile's rows, the inner reduction loop
//   parallel:       0 none, 1 the outer rows, 2 outer rows × outer columns
//   cache_write:    (matmul) 1 accumulates the tile in C.local, computed per
//                   tile of C; 0 tiles C in place
//
// dense: the element-wise consumers of the product (bias, ReLU) are inlined
// into the output, which takes the tile loops, and the product is computed
// per register tile of the output, so it lives in a tile-sized buffer (the
// role C.local plays for matmul).
#include "template_util.h"

#include "kiln/space/templates.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace kiln::space {

namespace {

/// Where the pieces of a 2-D product are in a DAG.
struct Gemm {
  int product = -1;          ///< the reduction stage
  std::vector<int> epilogue; ///< element-wise consumers, in order; the last is the output
};

Expected<Gemm> match_gemm(std::string_view name, const ir::ComputeDAG& dag) {
  auto refuse = [&](const std::string& why) { return detail::mismatch(name, dag, why); };
  std::vector<int> computes = detail::compute_stages(dag), reductions;
  for (int s : computes)
    if (dag.stage(s).reduction())
      reductions.push_back(s);
  if (reductions.size() != 1)
    return refuse(fmt::format("it has {} reduction stages ({}); the template schedules one 2-D "
                              "product C[i, j] = sum(… for k)",
                              reductions.size(), detail::stage_names(dag, reductions)));
  Gemm g;
  g.product = reductions[0];
  const ir::Stage& p = dag.stage(g.product);
  if (p.axes.size() != 2 || p.reduction()->axes.size() != 1)
    return refuse(fmt::format("stage '{}' has {} spatial and {} reduction axes; the template "
                              "schedules C[i, j] = sum(… for k): 2 and 1",
                              p.name, p.axes.size(), p.reduction()->axes.size()));
  // Follow the chain of element-wise consumers to the output.
  int last = g.product;
  while (!dag.stage(last).is_output) {
    std::vector<int> cs = dag.consumers(last);
    if (cs.size() != 1 || !detail::reads_elementwise(dag.stage(cs[0]), dag.stage(last)))
      return refuse(fmt::format("stage '{}' is read by [{}]; the template fuses only a chain of "
                                "element-wise stages after the product",
                                dag.stage(last).name, detail::stage_names(dag, cs)));
    last = cs[0];
    g.epilogue.push_back(last);
  }
  if (computes.size() != 1 + g.epilogue.size()) {
    std::vector<int> others;
    for (int s : computes)
      if (s != g.product && std::find(g.epilogue.begin(), g.epilogue.end(), s) == g.epilogue.end())
        others.push_back(s);
    return refuse(fmt::format("stages [{}] are neither the product '{}' nor its element-wise "
                              "consumers",
                              detail::stage_names(dag, others), p.name));
  }
  return g;
}

class GemmTemplate : public Template {
public:
  GemmTemplate(std::string_view name, const ir::ComputeDAG& dag, const Gemm& g,
               const SpaceParams& params)
      : Template(dag), name_(name), gemm_(g) {
    const ir::Stage& p = dag_.stage(g.product);
    // The register tile: a few rows (unrolled) of a few vectors.
    space_.define_split("tile_y", p.axes[0].extent, 3, 16);
    space_.define_split("tile_x", p.axes[1].extent, 3,
                        4 * std::max<std::int64_t>(params.vector_lanes, 1));
    space_.define_split("tile_k", p.reduction()->axes[0].extent, 2, 16);
    space_.define_reorder("reorder_inner", {{"ko", "ki", "yi", "xi"}, {"ko", "yi", "ki", "xi"}});
    space_.define_annotate("ann_yi", {"none", "unroll"});
    space_.define_annotate("ann_ki", {"none", "unroll"});
    space_.define_knob("parallel", {0, 1, 2});
    if (g.epilogue.empty())
      space_.define_knob("cache_write", {0, 1});
  }

  std::string_view name() const override { return name_; }

  std::vector<schedule::Step> steps(const KnobConfig& config) const override {
    ConfigView cfg(space_, config);
    std::vector<schedule::Step> out;
    detail::Schedule s(out);
    const ir::Stage& p = dag_.stage(gemm_.product);
    const std::string y = p.axes[0].name, x = p.axes[1].name, k = p.reduction()->axes[0].name;
    bool cached = gemm_.epilogue.empty() && cfg.value("cache_write") == 1;
    if (gemm_.epilogue.empty() && !cached) {
      tile_in_place(s, cfg, p.name, y, x, k);
      return out;
    }
    // The stage with the tile loops (the copy out of C.local, or the fused
    // output) and the stage computed per tile.
    std::string outer = p.name, tiled = p.name;
    std::string oy = y, ox = x;
    if (cached) {
      tiled = s.cache_write(p.name);
    } else {
      for (std::size_t e = 0; e + 1 < gemm_.epilogue.size(); ++e)
        s.compute_inline(dag_.stage(gemm_.epilogue[e]).name);
      const ir::Stage& o = dag_.stage(gemm_.epilogue.back());
      outer = o.name, oy = o.axes[0].name, ox = o.axes[1].name;
    }
    std::vector<std::string> ys = s.split(outer, oy, cfg.split("tile_y"));
    std::vector<std::string> xs = s.split(outer, ox, cfg.split("tile_x"));
    s.reorder(outer, {ys[0], xs[0], ys[1], xs[1], ys[2], xs[2]});
    parallelize(s, cfg, outer, ys[0], xs[0]);
    if (cfg.split("tile_x")[2] > 1)
      s.vectorize(outer, xs[2]);
    if (cfg.annotation("ann_yi") == "unroll")
      s.unroll(outer, ys[2]);
    s.compute_at(tiled, outer, xs[1]);
    std::vector<std::string> ks = s.split(tiled, k, cfg.split("tile_k"));
    s.reorder(tiled, inner_order(cfg, ks[0], ks[1], y, x));
    annotate_tile(s, cfg, tiled, y, x, ks[1]);
    return out;
  }

private:
  /// matmul without a cache: i.0 j.0 i.1 j.1, then the register tile.
  void tile_in_place(detail::Schedule& s, const ConfigView& cfg, const std::string& c,
                     const std::string& y, const std::string& x, const std::string& k) const {
    std::vector<std::string> ys = s.split(c, y, cfg.split("tile_y"));
    std::vector<std::string> xs = s.split(c, x, cfg.split("tile_x"));
    std::vector<std::string> ks = s.split(c, k, cfg.split("tile_k"));
    std::vector<std::string> order = {ys[0], xs[0], ys[1], xs[1]};
    for (const std::string& l : inner_order(cfg, ks[0], ks[1], ys[2], xs[2]))
      order.push_back(l);
    s.reorder(c, order);
    parallelize(s, cfg, c, ys[0], xs[0]);
    annotate_tile(s, cfg, c, ys[2], xs[2], ks[1]);
  }

  /// The reorder knob's symbolic loops mapped to this stage's loops.
  static std::vector<std::string> inner_order(const ConfigView& cfg, const std::string& ko,
                                              const std::string& ki, const std::string& yi,
                                              const std::string& xi) {
    const std::map<std::string, std::string> loops = {
        {"ko", ko}, {"ki", ki}, {"yi", yi}, {"xi", xi}};
    std::vector<std::string> out;
    for (const std::string& l : cfg.order("reorder_inner"))
      out.push_back(loops.at(l));
    return out;
  }

  static void parallelize(detail::Schedule& s, const ConfigView& cfg, const std::string& stage,
                          const std::string& yt, const std::string& xt) {
    std::int64_t p = cfg.value("parallel");
    if (p == 1)
      s.parallel(stage, yt);
    else if (p == 2)
      s.parallel(stage, s.fuse(stage, {yt, xt}));
  }

  static void annotate_tile(detail::Schedule& s, const ConfigView& cfg, const std::string& stage,
                            const std::string& yi, const std::string& xi, const std::string& ki) {
    if (cfg.split("tile_x")[2] > 1)
      s.vectorize(stage, xi);
    if (cfg.annotation("ann_yi") == "unroll")
      s.unroll(stage, yi);
    if (cfg.annotation("ann_ki") == "unroll")
      s.unroll(stage, ki);
  }

  std::string name_;
  Gemm gemm_;
};

} // namespace

Expected<std::unique_ptr<Template>> bind_matmul(const ir::ComputeDAG& dag,
                                                const SpaceParams& params) {
  auto g = match_gemm("matmul", dag);
  if (!g)
    return g.error();
  if (!g->epilogue.empty())
    return detail::mismatch(
        "matmul", dag,
        fmt::format("the product '{}' has element-wise consumers [{}]; use template 'dense'",
                    dag.stage(g->product).name, detail::stage_names(dag, g->epilogue)));
  return std::unique_ptr<Template>(new GemmTemplate("matmul", dag, *g, params));
}

Expected<std::unique_ptr<Template>> bind_dense(const ir::ComputeDAG& dag,
                                               const SpaceParams& params) {
  auto g = match_gemm("dense", dag);
  if (!g)
    return g.error();
  if (g->epilogue.empty())
    return detail::mismatch("dense", dag,
                            fmt::format("the product '{}' is the output, with no element-wise "
                                        "consumer to fuse; use template 'matmul'",
                                        dag.stage(g->product).name));
  return std::unique_ptr<Template>(new GemmTemplate("dense", dag, *g, params));
}

} // namespace kiln::space
