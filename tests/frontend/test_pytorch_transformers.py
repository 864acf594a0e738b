"""``from_pytorch`` over the model families of ``transformers``, each built from a small
config with random weights, compiled for the VM on the cpu target and compared with
eager PyTorch; the text families also with a dynamic sequence length.

Optional: runs when ``transformers`` is installed (``pip install relayir[transformers]``);
it is not in the ``test`` extra because it adds minutes to the suite."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tf = pytest.importorskip("transformers", reason="transformers is not installed: "
                         "pip install relayir[transformers] to import its model families")

import relayir as relay  # noqa: E402
from relayir.frontend import from_pytorch  # noqa: E402

pytestmark = pytest.mark.slow

TEXT = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=64)
GQA = dict(TEXT, num_key_value_heads=2)
SEQ2SEQ = dict(vocab_size=100, d_model=32, encoder_layers=2, decoder_layers=2,
               encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
               decoder_ffn_dim=64, pad_token_id=1, bos_token_id=2, eos_token_id=3,
               decoder_start_token_id=2)
VISION = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=64, image_size=32, patch_size=8)

# family: (builds the model, input kind)
FAMILIES = {
    "bert": (lambda: tf.BertModel(tf.BertConfig(**TEXT)), "text"),
    "distilbert": (lambda: tf.DistilBertModel(tf.DistilBertConfig(
        vocab_size=100, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
        max_position_embeddings=64)), "text"),
    "roberta": (lambda: tf.RobertaModel(tf.RobertaConfig(**TEXT, pad_token_id=1)), "text"),
    "albert": (lambda: tf.AlbertModel(tf.AlbertConfig(**TEXT, embedding_size=16)), "text"),
    "electra": (lambda: tf.ElectraModel(tf.ElectraConfig(**TEXT, embedding_size=16)), "text"),
    "gpt2": (lambda: tf.GPT2Model(tf.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4,
                                                n_positions=64, bos_token_id=1,
                                                eos_token_id=1)), "text"),
    "opt": (lambda: tf.OPTModel(tf.OPTConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        ffn_dim=64, max_position_embeddings=64, word_embed_proj_dim=32, pad_token_id=1,
        bos_token_id=2, eos_token_id=2)), "text"),
    "llama": (lambda: tf.LlamaModel(tf.LlamaConfig(**GQA)), "text"),
    "mistral": (lambda: tf.MistralModel(tf.MistralConfig(**GQA)), "text"),
    "qwen2": (lambda: tf.Qwen2Model(tf.Qwen2Config(**GQA)), "text"),
    "gemma": (lambda: tf.GemmaModel(tf.GemmaConfig(**GQA, head_dim=8)), "text"),
    "phi": (lambda: tf.PhiModel(tf.PhiConfig(**TEXT)), "text"),
    "t5-encoder": (lambda: tf.T5EncoderModel(tf.T5Config(
        vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4)), "text"),
    "bart-encoder": (lambda: tf.BartModel(tf.BartConfig(
        **SEQ2SEQ, max_position_embeddings=64)).get_encoder(), "text"),
    "whisper-encoder": (lambda: tf.WhisperModel(tf.WhisperConfig(
        **SEQ2SEQ, num_mel_bins=8, max_source_positions=16)).get_encoder(), "audio"),
    "wav2vec2": (lambda: tf.Wav2Vec2Model(tf.Wav2Vec2Config(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        conv_dim=(8, 8), conv_stride=(4, 4), conv_kernel=(8, 4), num_conv_pos_embeddings=8,
        num_conv_pos_embedding_groups=2)), "wave"),
    "vit": (lambda: tf.ViTModel(tf.ViTConfig(**VISION)), "image"),
    "deit": (lambda: tf.DeiTModel(tf.DeiTConfig(**VISION)), "image"),
    "swin": (lambda: tf.SwinModel(tf.SwinConfig(image_size=32, patch_size=4, embed_dim=16,
                                                depths=[1, 1], num_heads=[2, 2],
                                                window_size=4)), "image"),
    "convnext": (lambda: tf.ConvNextModel(tf.ConvNextConfig(
        num_stages=2, hidden_sizes=[8, 16], depths=[1, 1], image_size=32)), "image"),
    "resnet": (lambda: tf.ResNetModel(tf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16],
                                                      depths=[1, 1])), "image"),
    "mobilevit": (lambda: tf.MobileViTModel(tf.MobileViTConfig(
        image_size=32, hidden_sizes=[16, 16, 16],
        neck_hidden_sizes=[8, 8, 16, 16, 16, 16, 32])), "image"),
}
DYNAMIC = ["bert", "roberta", "gpt2", "llama", "t5-encoder"]


class LastHidden(torch.nn.Module):
    """The model's last hidden state (its output object is not a tensor)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        out = self.model(x)
        return out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]


def _example(kind, n=8):
    torch.manual_seed(1)
    return {"text": lambda: torch.randint(4, 100, (1, n)),
            "image": lambda: torch.randn(1, 3, 32, 32),
            "audio": lambda: torch.randn(1, 8, 32),
            "wave": lambda: torch.randn(1, 400)}[kind]()


def _model(name):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LastHidden(FAMILIES[name][0]().eval())


def _check(model, vm, x):
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(vm.invoke("main", x.numpy()), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_the_family_imports_and_matches_eager(name):
    model, kind = _model(name), FAMILIES[name][1]
    x = _example(kind)
    mod, params = from_pytorch(model, [("x", (tuple(x.shape), str(x.dtype).split(".")[1]))])
    _check(model, relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu", params=params)), x)


@pytest.mark.parametrize("name", DYNAMIC)
def test_a_dynamic_sequence_compiles_once_for_every_length(name):
    model = _model(name)
    mod, params = from_pytorch(model, [("x", ((1, "seq"), "int64"))])
    assert "dim_ranges" in mod.astext()
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu", params=params))
    for n in (3, 17):
        _check(model, vm, _example("text", n))
