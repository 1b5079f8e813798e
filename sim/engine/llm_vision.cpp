// A vision-language model's image (docs/llm.md, "Vision-language models"): its tokens in the
// prompt, and its vision tower as a phase of its own before the prefill.
#include <cstdint>
#include <optional>
#include <string>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/engine/llm_run.h"
#include "sim/engine/llm_run_internal.h"
#include "sim/scheduler/lowering.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::engine {
namespace llm = workloads::llm;
using detail::LayerStack;

namespace {

/// The vision tower's blocks: of two kinds, attention inside windows (Qwen2.5-VL) and over every patch.
LayerStack vision_blocks(const llm::LlmConfig& model) {
  return {model.vision.block_prefix(), model.vision.depth,
          [&model](std::int64_t d) { return model.vision.windowed(d) ? 0 : 1; }};
}

/// The encoder as the phase list and messages name it: its patches, and with anyres tiling the
/// images (the base image and the crops) they are cut from.
std::string encoder_name(const llm::VisionInput& image) {
  const std::string patches = std::to_string(image.patches) + " patches";
  return "vision encoder of " + (image.images > 1 ? std::to_string(image.images) + " images of " : "") + patches;
}

}  // namespace

namespace detail {

Phase encoder_phase(const Prepared& p, const llm::VisionInput& image) {
  return {encoder_name(image), vision_blocks(p.model), [&p, image](std::int64_t blocks, bool) {
            llm::LlmConfig model = p.model;
            model.vision.depth = blocks;
            return llm::build_vision_encoder(model, image, p.widths);
          }};
}

/// `s` with the image's tokens in the prompt (--image: the prefill's prompt is the text and the
/// image tokens; the decode steps follow both), and the image as the vision tower sees it.
LlmSpec with_image(const LlmSpec& s, std::optional<llm::VisionInput>& image) {
  if (s.image.empty()) return s;
  if (s.batch != 1)
    throw InputError("--image", "expected --batch 1 beside it (one sequence with its image), found --batch " +
                                    std::to_string(s.batch));
  if (!s.draft.empty())
    throw InputError("--image",
                     "expected no --draft beside it (speculative decoding of a vision-language model is "
                     "not modelled), found --draft " +
                         s.draft);
  check_count(s.prompt, 1, "--prompt");
  check_count(s.generate, 0, "--generate");
  check_count(s.context, 0, "--context");
  const llm::LlmConfig model = llm::load_llm_config(s.model, config::data_dir());
  image = llm::vision_input(model, s.image, "--image");
  LlmSpec t = s;
  t.prompt += image->tokens;
  llm::check_context(model, final_context(t),
                     (s.context > 0 ? "--context " + std::to_string(s.context) + " + " : std::string()) + "--prompt " +
                         std::to_string(s.prompt) + " + " + std::to_string(image->tokens) + " image tokens (--image " +
                         s.image + ") + --generate " + std::to_string(s.generate));
  return t;
}

/// The vision encoder's graph must fit DRAM beside the language model's weights and cache.
void check_encoder_graph(const Prepared& p, const llm::VisionInput& image) {
  const workloads::Graph g = llm::build_vision_encoder(p.model, image, p.widths);
  try {
    sched::check_dram_capacity(sched::resident_dram_bytes(g, p.hw), p.hw);
  } catch (const InputError& e) {
    throw InputError(encoder_name(image), e.what());
  }
}

}  // namespace detail

}  // namespace npusim::engine
