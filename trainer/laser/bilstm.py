"""Official LASER2/LASER3 BiLSTM checkpoints -> ONNX encoders in the model registry.

    >>> manifest = export_laser(Path("laser2.pt"), Path("laser2.spm"), Path("laser2.cvocab"), "laser2")
    >>> manifest.dim, manifest.export_parity["min_cosine"]      # (1024, >= 0.9999)

A LASER BiLSTM checkpoint is a torch file with three keys: `params` (the encoder's
constructor arguments: num_embeddings, padding_idx, embed_dim, hidden_size, num_layers,
bidirectional, left_pad, padding_value), `model` (its state dict: embed_tokens.weight,
lstm.weight_ih_l0, ...) and `dictionary` (token -> id). Sentence vector = max over time
of the (packed) BiLSTM outputs. fairseq transformer checkpoints (`cfg` instead of
`params`) are refused.

The ONNX graph runs one unidirectional LSTM per layer and direction on right-padded
input; the backward direction reads each row reversed within its own length, so padding
never reaches a real position (what packing does in torch). Outputs past a row's length
are set to -inf before the max, and the pooled vector is L2-normalised in the graph.
"""

from __future__ import annotations

import json
import logging
import pickle
import shutil
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from engine.config import DataPaths, data_paths
from engine.encoders.laser_onnx import VOCAB_FILE
from engine.encoders.laser_tokenizer import LaserTokenizer, read_cvocab, with_special_ids
from engine.errors import InputError, ModelError
from engine.model_manifest import ModelManifest
from engine.models import build_model, check_name, model_dir
from trainer.laser.checks import check_params
from trainer.serving.export import OPSET, PARITY_MIN_COSINE, PARITY_SENTENCES, Progress, cosine_rows

log = logging.getLogger(__name__)

REQUIRED_KEYS = ("params", "model", "dictionary")
SPM_FILE = "laser.spm"
CVOCAB_FILE = "laser.cvocab"
MAX_LENGTH = 1024  # tokens per text, </s> included; LASER itself never truncates
# Below these shares the files do not belong together: .cvocab tokens whose id matches
# the checkpoint's dictionary, and SentencePiece pieces the dictionary knows.
CVOCAB_MIN_AGREEMENT = 0.5
SPM_MIN_COVERAGE = 0.5


class LaserLstm(nn.Module):
    """LASER's BiLSTM encoder; parameter names match the checkpoint's `model` state dict.

    forward(tokens [batch, seq] right-padded, lengths [batch]) -> [batch, output_units],
    the max over time of the packed LSTM outputs (not normalised, as in LASER).
    """

    def __init__(self, num_embeddings: int, padding_idx: int, embed_dim: int = 320,
                 hidden_size: int = 512, num_layers: int = 1, bidirectional: bool = False,
                 left_pad: bool = True, padding_value: float = 0.0):
        super().__init__()
        self.padding_idx = padding_idx
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bidirectional = bidirectional
        # LASER stores left_pad but always feeds right-padded, length-sorted batches
        self.left_pad = left_pad
        self.padding_value = padding_value
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim, padding_idx=padding_idx)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers=num_layers,
                            bidirectional=bidirectional)
        self.output_units = hidden_size * (2 if bidirectional else 1)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        seq = tokens.shape[1]
        x = self.embed_tokens(tokens).transpose(0, 1)  # [seq, batch, embed]
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, padding_value=self.padding_value,
                                                  total_length=seq)  # [seq, batch, units]
        padded = torch.arange(seq, device=tokens.device)[:, None] >= lengths[None, :].to(tokens.device)
        out = out.masked_fill(padded[..., None], float("-inf"))
        return out.max(dim=0).values


class LaserOnnxGraph(nn.Module):
    """What the ONNX file computes: (input_ids [b, s], lengths [b]) -> unit vectors [b, units].

    Each LSTM layer/direction becomes its own unidirectional nn.LSTM (one ONNX LSTM op);
    the backward one runs on rows reversed within their lengths.
    """

    def __init__(self, encoder: LaserLstm):
        super().__init__()
        self.embed_tokens = encoder.embed_tokens
        directions = ("", "_reverse") if encoder.bidirectional else ("",)
        self.layers = nn.ModuleList()
        for layer in range(encoder.num_layers):
            self.layers.append(nn.ModuleList(
                _single_lstm(encoder.lstm, layer, suffix) for suffix in directions))

    def forward(self, input_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        steps = torch.arange(input_ids.shape[1], device=input_ids.device)[None, :]  # [1, s]
        valid = steps < lengths[:, None]  # [b, s]
        # position t of a row reversed within its length; padding stays where it is
        reverse = torch.where(valid, lengths[:, None] - 1 - steps, steps)  # [b, s]
        x = self.embed_tokens(input_ids)  # [b, s, embed]
        for directions in self.layers:
            outputs = [directions[0](x)[0]]  # [b, s, hidden]
            if len(directions) == 2:
                backward = directions[1](_gather_steps(x, reverse))[0]
                outputs.append(_gather_steps(backward, reverse))
            x = torch.cat(outputs, dim=-1)  # [b, s, units]
        x = x.masked_fill(~valid[..., None], float("-inf"))
        return nn.functional.normalize(x.max(dim=1).values, p=2.0, dim=-1)


def _gather_steps(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x[b, index[b, t], :] for every b, t; x [b, s, d], index [b, s]."""
    return torch.gather(x, 1, index[..., None].expand(-1, -1, x.shape[-1]))


def _single_lstm(lstm: nn.LSTM, layer: int, suffix: str) -> nn.LSTM:
    """A batch-first, one-layer, one-direction LSTM holding `lstm`'s weights of that layer."""
    weight_ih = getattr(lstm, f"weight_ih_l{layer}{suffix}")
    single = nn.LSTM(weight_ih.shape[1], lstm.hidden_size, batch_first=True, bias=lstm.bias)
    with torch.no_grad():
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            if hasattr(single, f"{kind}_l0"):
                getattr(single, f"{kind}_l0").copy_(getattr(lstm, f"{kind}_l{layer}{suffix}"))
    return single


def load_laser_checkpoint(path: Path) -> tuple[LaserLstm, dict, dict[str, int]]:
    """(encoder in eval mode, its params, token -> id dictionary) from a LASER `.pt` file.

    Raises:
        ModelError naming `path` when the file is missing, truncated, not a LASER BiLSTM
        checkpoint (e.g. a fairseq transformer one), or its weights do not fit its params.
    """
    path = Path(path)
    state = _torch_load(path)
    if not isinstance(state, dict):
        raise ModelError(f"{path}: not a LASER checkpoint (holds a {type(state).__name__}, "
                         f"expected a dict with keys {', '.join(REQUIRED_KEYS)})", path)
    if "params" not in state and "cfg" in state:
        raise ModelError(f"{path}: a fairseq transformer checkpoint ('cfg' instead of "
                         f"'params'); only LASER BiLSTM checkpoints can be imported", path)
    missing = [k for k in REQUIRED_KEYS if k not in state]
    if missing:
        raise ModelError(f"{path}: not a LASER BiLSTM checkpoint: missing key(s) "
                         f"{', '.join(missing)} (found {', '.join(map(str, state)) or 'none'})",
                         path)
    # sizes checked against the weights' shapes before LaserLstm allocates anything
    params = check_params(path, state["params"], state["model"], LaserLstm)
    encoder = LaserLstm(**params)
    try:
        encoder.load_state_dict(state["model"], strict=True)
    except (RuntimeError, TypeError, AttributeError) as e:
        raise ModelError(f"{path}: the weights do not fit a LASER BiLSTM with params "
                         f"{params}: {str(e)[:500]}", path) from e
    return encoder.eval(), params, _check_dictionary(path, state["dictionary"], params)


def _torch_load(path: Path):
    if not path.is_file():
        raise ModelError(f"LASER checkpoint is missing: {path}", path)
    try:
        # weights_only: a checkpoint is data; BiLSTM ones hold only dicts and tensors
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        raise ModelError(f"{path}: holds Python objects other than tensors and dicts "
                         f"(not a LASER BiLSTM checkpoint?): {str(e)[:300]}", path) from e
    except (RuntimeError, EOFError, OSError, ValueError) as e:
        raise ModelError(f"{path}: not a readable torch checkpoint (truncated or damaged?): "
                         f"{str(e)[:300]}", path) from e


def _check_dictionary(path: Path, dictionary, params: dict) -> dict[str, int]:
    if not isinstance(dictionary, dict) or not all(isinstance(v, int) for v in dictionary.values()):
        raise ModelError(f"{path}: 'dictionary' must map tokens to integer ids", path)
    vocab = with_special_ids(dictionary)
    too_big = [t for t, i in vocab.items() if not 0 <= i < params["num_embeddings"]]
    if too_big:
        raise ModelError(f"{path}: {len(too_big)} dictionary ids fall outside the "
                         f"{params['num_embeddings']} embeddings (e.g. {too_big[0]!r})", path)
    return vocab


def torch_encode(encoder: LaserLstm, tokenizer: LaserTokenizer, texts: Sequence[str],
                 batch_size: int = 32) -> np.ndarray:
    """Reference vectors in plain torch: [len(texts), units], L2-normalised rows."""
    out = []
    for start in range(0, len(texts), batch_size):
        rows = tokenizer.batch_ids(texts[start:start + batch_size])
        lengths = torch.tensor([len(r) for r in rows])
        tokens = torch.full((len(rows), int(lengths.max())), encoder.padding_idx)
        for i, row in enumerate(rows):
            tokens[i, :len(row)] = torch.tensor(row)
        with torch.inference_mode():
            out.append(nn.functional.normalize(encoder(tokens, lengths), dim=-1).numpy())
    return np.concatenate(out).astype(np.float32)


def export_laser_onnx(encoder: LaserLstm, path: Path, *, opset: int = OPSET) -> Path:
    """Writes `encoder` as an ONNX graph with dynamic batch and sequence axes."""
    graph = LaserOnnxGraph(encoder).eval()
    ids = torch.tensor([[5, 6, 7, 2], [8, 2, 1, 1]], dtype=torch.long) % encoder.embed_tokens.num_embeddings
    lengths = torch.tensor([4, 2], dtype=torch.long)
    with torch.no_grad(), warnings.catch_warnings():
        # legacy exporter on purpose (no onnxscript in the app); its LSTM notes are not news
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*LSTM.*", category=UserWarning)
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        torch.onnx.export(
            graph, (ids, lengths), str(path), dynamo=False, opset_version=opset,
            input_names=["input_ids", "lengths"], output_names=["embedding"],
            dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "lengths": {0: "batch"},
                          "embedding": {0: "batch"}},
            do_constant_folding=True,
        )
    return path


def export_laser(
    checkpoint: Path,
    spm_model: Path,
    cvocab: Path | None,
    name: str,
    *,
    languages: Sequence[str] = (),
    source: str = "LASER (facebookresearch/LASER)",
    licence: str = "BSD-3-Clause",
    notes: str = "",
    training: dict | None = None,
    punct_lang: str = "en",
    paths: DataPaths | None = None,
    replace_existing: bool = False,
    progress: Progress | None = None,
) -> ModelManifest:
    """Exports a LASER BiLSTM checkpoint to ONNX and registers it as `name` (family "laser").

    Args:
        checkpoint: `laser2.pt` or a `laser3-xxx.v1.pt` BiLSTM checkpoint.
        spm_model: its SentencePiece model (`laser2.spm`).
        cvocab: its fairseq vocabulary (`laser2.cvocab`), checked against the checkpoint's
            dictionary and copied; None skips the check.
        training: how the model was made (a distilled student's run), kept in the manifest.
        punct_lang: language of the Moses punctuation rules (LASER uses "en").
    Raises:
        ModelError naming the file at fault; ModelError when ONNX and torch disagree
        (cosine < 0.9999 on the parity sentences). Nothing is registered then.
    """
    progress = progress or (lambda fraction, message: None)
    paths = paths or data_paths()
    check_name(name)
    target = model_dir(name, paths)
    if target.exists() and not replace_existing:
        raise InputError(f"a model named '{name}' is already installed")
    progress(0.0, "loading the LASER checkpoint")
    encoder, params, vocab = load_laser_checkpoint(checkpoint)

    def build(work: Path) -> ModelManifest:
        manifest = _export_into(work, encoder, params, vocab, Path(spm_model), cvocab, name,
                                punct_lang, progress)
        return replace(manifest, languages=tuple(languages), source=source,
                       licence=licence, notes=notes, training=training)

    return build_model(name, paths, build, progress)


def _export_into(work: Path, encoder: LaserLstm, params: dict, vocab: dict, spm_model: Path,
                 cvocab: Path | None, name: str, punct_lang: str,
                 progress: Progress) -> ModelManifest:
    tokenizer = LaserTokenizer(spm_model, vocab, lang=punct_lang, max_length=MAX_LENGTH)
    shutil.copyfile(spm_model, work / SPM_FILE)
    (work / VOCAB_FILE).write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    spm_check = check_spm_coverage(tokenizer, vocab)
    cvocab_check = {}
    if cvocab is not None:
        cvocab_check = check_cvocab(Path(cvocab), vocab)
        shutil.copyfile(cvocab, work / CVOCAB_FILE)
    progress(0.2, "exporting to ONNX")
    onnx_path = export_laser_onnx(encoder, work / "model.onnx")
    manifest = ModelManifest(
        name=name, family="laser", dim=encoder.output_units, pooling="max",
        max_length=MAX_LENGTH, prefixes={"query": "", "passage": ""},
        variants={"fp32": {"file": onnx_path.name},
                  "fp16": {"file": None, "reason": "not produced for LASER (BiLSTM) models"},
                  "int8": {"file": None, "reason": "not produced for LASER (BiLSTM) models"}},
        pad_token_id=int(params["padding_idx"]), tokenizer_file=SPM_FILE,
        preprocessing={"vocab_file": VOCAB_FILE, "punct_lang": punct_lang, "lower_case": True,
                       "non_printing": "to space", "moses_punct": "perl parity, Moses 4.0 quotes",
                       "eos": True, "bos": False, "padding": "right",
                       "l2_normalised": "in the ONNX graph", "params": params,
                       "spm": spm_check, "cvocab": cvocab_check},
    )
    progress(0.6, "checking parity with torch")
    parity = laser_parity(encoder, tokenizer, work, manifest)
    return replace(manifest, export_parity=parity)


def check_spm_coverage(tokenizer: LaserTokenizer, vocab: dict[str, int]) -> dict:
    """Share of the SentencePiece model's pieces that the checkpoint's dictionary knows.

    Raises:
        ModelError naming the .spm when under half are known: its pieces would mostly
        become <unk>, so it is not the model the checkpoint was trained with.
    """
    spm = tokenizer.spm
    pieces = [spm.id_to_piece(i) for i in range(spm.get_piece_size())
              if not (spm.is_unknown(i) or spm.is_control(i))]
    known = sum(piece in vocab for piece in pieces)
    if not pieces or known / len(pieces) < SPM_MIN_COVERAGE:
        raise ModelError(f"{tokenizer.spm_path}: the checkpoint's dictionary knows only {known} "
                         f"of its {len(pieces)} pieces; is it the checkpoint's SentencePiece "
                         f"model?", tokenizer.spm_path)
    return {"pieces": len(pieces), "known": known}


def check_cvocab(path: Path, vocab: dict[str, int]) -> dict:
    """How well a `.cvocab` agrees with the checkpoint's dictionary (token i -> id i + 4).

    The checkpoint's dictionary gives the ids (as in LASER); the .cvocab is a cross-check.

    Raises:
        ModelError naming `path` when under half of its tokens agree: the files do not
        belong together (a LASER3 vocabulary beside LASER2 weights, say).
    """
    tokens = read_cvocab(path)
    agreeing = sum(vocab.get(token) == i + 4 for i, token in enumerate(tokens))
    share = agreeing / len(tokens)
    if share < CVOCAB_MIN_AGREEMENT:
        raise ModelError(f"{path}: only {agreeing} of {len(tokens)} tokens have the id the "
                         f"checkpoint's dictionary gives them; is it the checkpoint's vocabulary?",
                         path)
    if agreeing < len(tokens):
        log.warning("%s: %d of %d tokens differ from the checkpoint's dictionary (it wins)",
                    path, len(tokens) - agreeing, len(tokens))
    return {"tokens": len(tokens), "agreeing": agreeing}


def laser_parity(encoder: LaserLstm, tokenizer: LaserTokenizer, work: Path,
                 manifest: ModelManifest) -> dict:
    """Cosine between torch and the served ONNX encoder on the multilingual parity set."""
    from engine.encoders.laser_onnx import LaserOnnxEncoder

    texts = list(PARITY_SENTENCES)
    reference = torch_encode(encoder, tokenizer, texts)
    served = LaserOnnxEncoder(work, manifest, variant="fp32", device="cpu").encode(texts)
    cos = cosine_rows(reference, served)
    parity = {"min_cosine": float(cos.min()), "mean_cosine": float(cos.mean()),
              "sentences": len(texts), "threshold": PARITY_MIN_COSINE, "opset": OPSET}
    if cos.min() < PARITY_MIN_COSINE:
        worst = texts[int(cos.argmin())]
        raise ModelError(f"ONNX export differs from torch: cosine {cos.min():.6f} < "
                         f"{PARITY_MIN_COSINE} on {worst!r}", work / "model.onnx")
    return parity
