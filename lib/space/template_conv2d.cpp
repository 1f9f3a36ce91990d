// The conv2d_nchw template: TVM's x86 direct convolution schedule in kiln
// steps, for conv[n, k, y, x] = sum(padded[…] * kernel[k, rc, ry, rx] for
// rc, ry, rx).
//
//   tile_oc, tile_oh, tile_ow: the register tile, output channels × rows ×
//                    columns (the columns vectorized)
//   tile_ic:         the input channels in two levels (ico, ici)
//   reorder_reduce:  the order of ico, ici, ry (kh), rx (kw) outside the tile
//   ann_tile:        unroll the tile's channel and row loops
//   unroll_kw:       unroll the kernel-width loop
//   parallel:        0 none, 1 batch × outer channels, 2 also outer rows
//   cache_write:     1 accumulates the tile in conv.local, computed per tile
//   pad:             0 inlines the padding into the convolution, 1 pads the
//                    whole input first (only when there is a padding stage)
#include "template_util.h"

#include "kiln/space/templates.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace kiln::space {

namespace {

struct Conv {
  int conv = -1;
  int pad = -1; ///< the padding stage, or -1 when the conv reads its input directly
};

Expected<Conv> match_conv(const ir::ComputeDAG& dag) {
  auto refuse = [&](const std::string& why) { return detail::mismatch("conv2d_nchw", dag, why); };
  const std::string shape = "conv[n, k, y, x] = sum(data[n, rc, …] * kernel[k, rc, ry, rx] for "
                            "rc, ry, rx)";
  std::vector<int> computes = detail::compute_stages(dag), outputs;
  for (int s : computes)
    if (dag.stage(s).is_output)
      outputs.push_back(s);
  if (outputs.size() != 1)
    return refuse(fmt::format("it has {} outputs ({}); the template schedules one {}",
                              outputs.size(), detail::stage_names(dag, outputs), shape));
  Conv c;
  c.conv = outputs[0];
  const ir::Stage& conv = dag.stage(c.conv);
  const ir::Reduce* r = conv.reduction();
  if (!r || conv.axes.size() != 4 || r->axes.size() != 3)
    return refuse(fmt::format("the output '{}' has {} spatial and {} reduction axes; the "
                              "template schedules {}: 4 and 3",
                              conv.name, conv.axes.size(), r ? r->axes.size() : 0, shape));
  std::vector<int> producers = dag.producers(c.conv);
  if (producers.size() != 2)
    return refuse(fmt::format("'{}' reads {} tensors ({}); a convolution reads an image and a "
                              "kernel",
                              conv.name, producers.size(), detail::stage_names(dag, producers)));
  for (int p : producers) {
    const ir::Stage& s = dag.stage(p);
    if (s.axes.size() != 4)
      return refuse(fmt::format("'{}' reads '{}', which has {} dimensions; NCHW images and KCRS "
                                "kernels have 4",
                                conv.name, s.name, s.axes.size()));
    if (s.is_placeholder())
      continue;
    // The padding: element-wise over its input, read by the conv alone.
    bool reads_inputs = true;
    for (int q : dag.producers(p))
      reads_inputs = reads_inputs && dag.stage(q).is_placeholder();
    if (s.reduction() || !reads_inputs || dag.consumers(p).size() != 1 || c.pad >= 0)
      return refuse(fmt::format("'{}' reads the computed stage '{}', which is not a padding of "
                                "an input (a stage without reduction that reads only inputs)",
                                conv.name, s.name));
    c.pad = p;
  }
  // The knobs name the axes by their roles in NCHW (tile_oc is axis 1):
  // the kernel must be read as kernel[k, rc, ry, rx]. An NHWC conv has the
  // same numbers of axes and inputs but other roles.
  std::vector<std::string> kernel_vars = {conv.axes[1].name, r->axes[0].name, r->axes[1].name,
                                          r->axes[2].name};
  if (std::none_of(producers.begin(), producers.end(), [&](int p) {
        return dag.stage(p).is_placeholder() &&
               detail::reads_exactly(r->body, dag.stage(p).name, kernel_vars);
      }))
    return refuse(fmt::format("'{}' reads no input as kernel[{}, {}, {}, {}] (output channel, "
                              "input channel, row, column); the template schedules the NCHW {}",
                              conv.name, kernel_vars[0], kernel_vars[1], kernel_vars[2],
                              kernel_vars[3], shape));
  if (computes.size() != (c.pad >= 0 ? 2u : 1u)) {
    std::vector<int> others;
    for (int s : computes)
      if (s != c.conv && s != c.pad)
        others.push_back(s);
    return refuse(fmt::format("stages [{}] are neither the padding nor the convolution",
                              detail::stage_names(dag, others)));
  }
  return c;
}

class Conv2dTemplate : public Template {
public:
  Conv2dTemplate(const ir::ComputeDAG& dag, const Conv& c, const SpaceParams& params)
      : Template(dag), conv_(c) {
    const ir::Stage& conv = dag_.stage(c.conv);
    const auto& red = conv.reduction()->axes;
    space_.define_split("tile_oc", conv.axes[1].extent, 2, 8);
    space_.define_split("tile_oh", conv.axes[2].extent, 2, 4);
    space_.define_split("tile_ow", conv.axes[3].extent, 2,
                        4 * std::max<std::int64_t>(params.vector_lanes, 1));
    space_.define_split("tile_ic", red[0].extent, 2, 64);
    space_.define_reorder(
        "reorder_reduce",
        {{"ico", "kh", "kw", "ici"}, {"ico", "ici", "kh", "kw"}, {"ico", "kh", "ici", "kw"}});
    space_.define_annotate("ann_tile", {"none", "unroll"});
    space_.define_annotate("unroll_kw", {"none", "unroll"});
    space_.define_knob("parallel", {0, 1, 2});
    space_.define_knob("cache_write", {0, 1});
    if (c.pad >= 0)
      space_.define_knob("pad", {0, 1});
  }

  std::string_view name() const override { return "conv2d_nchw"; }

  std::vector<schedule::Step> steps(const KnobConfig& config) const override {
    ConfigView cfg(space_, config);
    std::vector<schedule::Step> out;
    detail::Schedule s(out);
    const ir::Stage& conv = dag_.stage(conv_.conv);
    const auto& red = conv.reduction()->axes;
    const std::string n = conv.axes[0].name, k = conv.axes[1].name, y = conv.axes[2].name,
                      x = conv.axes[3].name;
    if (conv_.pad >= 0 && cfg.value("pad") == 0)
      s.compute_inline(dag_.stage(conv_.pad).name);
    bool cached = cfg.value("cache_write") == 1;
    std::string tiled = cached ? s.cache_write(conv.name) : conv.name;

    std::vector<std::string> ks = s.split(conv.name, k, cfg.split("tile_oc"));
    std::vector<std::string> ys = s.split(conv.name, y, cfg.split("tile_oh"));
    std::vector<std::string> xs = s.split(conv.name, x, cfg.split("tile_ow"));
    std::vector<std::string> outer = {n, ks[0], ys[0], xs[0]};
    std::vector<std::string> tile = {ks[1], ys[1], xs[1]};
    if (cached) {
      std::vector<std::string> order = outer;
      order.insert(order.end(), tile.begin(), tile.end());
      s.reorder(conv.name, order);
      parallelize(s, cfg, conv.name, outer);
      annotate_tile(s, cfg, conv.name, tile);
      // conv.local over one tile: its spatial loops span the tile.
      s.compute_at(tiled, conv.name, xs[0]);
      std::vector<std::string> ics = s.split(tiled, red[0].name, cfg.split("tile_ic"));
      std::vector<std::string> order_local = {n};
      for (const std::string& l : reduce_order(cfg, ics, red[1].name, red[2].name))
        order_local.push_back(l);
      for (const std::string& l : {k, y, x})
        order_local.push_back(l);
      s.reorder(tiled, order_local);
      annotate_tile(s, cfg, tiled, {k, y, x});
      if (cfg.annotation("unroll_kw") == "unroll")
        s.unroll(tiled, red[2].name);
      return out;
    }
    std::vector<std::string> ics = s.split(conv.name, red[0].name, cfg.split("tile_ic"));
    std::vector<std::string> order = outer;
    for (const std::string& l : reduce_order(cfg, ics, red[1].name, red[2].name))
      order.push_back(l);
    order.insert(order.end(), tile.begin(), tile.end());
    s.reorder(conv.name, order);
    parallelize(s, cfg, conv.name, outer);
    annotate_tile(s, cfg, conv.name, tile);
    if (cfg.annotation("unroll_kw") == "unroll")
      s.unroll(conv.name, red[2].name);
    return out;
  }

private:
  static std::vector<std::string> reduce_order(const ConfigView& cfg,
                                               const std::vector<std::string>& ics,
                                               const std::string& kh, const std::string& kw) {
    const std::map<std::string, std::string> loops = {
        {"ico", ics[0]}, {"ici", ics[1]}, {"kh", kh}, {"kw", kw}};
    std::vector<std::string> out;
    for (const std::string& l : cfg.order("reorder_reduce"))
      out.push_back(loops.at(l));
    return out;
  }

  /// Fuses the batch with the outer channel (and row) loops, then marks
  /// the fused loop parallel.
  static void parallelize(detail::Schedule& s, const ConfigView& cfg, const std::string& stage,
                          const std::vector<std::string>& outer) {
    std::int64_t p = cfg.value("parallel");
    if (p == 0)
      return;
    std::vector<std::string> fused(outer.begin(), outer.begin() + (p == 1 ? 2 : 3));
    s.parallel(stage, s.fuse(stage, fused));
  }

  static void annotate_tile(detail::Schedule& s, const ConfigView& cfg, const std::string& stage,
                            const std::vector<std::string>& tile) {
    if (cfg.split("tile_ow")[1] > 1)
      s.vectorize(stage, tile[2]);
    if (cfg.annotation("ann_tile") == "unroll") {
      s.unroll(stage, tile[0]);
      s.unroll(stage, tile[1]);
    }
  }

  Conv conv_;
};

} // namespace

Expected<std::unique_ptr<Template>> bind_conv2d_nchw(const ir::ComputeDAG& dag,
                                                     const SpaceParams& params) {
  auto c = match_conv(dag);
  if (!c)
    return c.error();
  return std::unique_ptr<Template>(new Conv2dTemplate(dag, *c, params));
}

} // namespace kiln::space
