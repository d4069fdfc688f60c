"""Synthetic prompt text sized to a token count: N words ≈ N tokens.

**The approximation.** Prompts are built from :data:`WORDS`, 1024 common lowercase English
words (3–7 letters), each checked offline (by running each vocabulary's BPE merges on it)
to encode as exactly one token with a leading space, and also at the start of a text, in:
OpenAI ``cl100k_base`` (GPT-4, GPT-3.5) and ``o200k_base`` (GPT-4o); Llama 3 (whose first
100,256 ranks are ``cl100k_base``'s); Qwen (``qwen.tiktoken``, the vocabulary Qwen 1
through 2.5 share); and Mistral's SentencePiece vocabularies v1 and v3 (Mistral 7B
v0.1–v0.3, Mixtral), which add the leading space themselves. GPT-2 too, with a leading
space. Words are joined by single spaces with no punctuation, so every pre-tokenizer above
splits the text at word boundaries and **a prompt of N words is N tokens** for those
tokenizers. Not checked: Mistral's Tekken (Nemo, Small 3), Gemma, DeepSeek, Phi; there a
few words may split, so expect somewhat more tokens than words. What the server reports
as ``prompt_tokens`` is the text plus the chat template: about 5–15 tokens of role
markers, BOS and generation prompt, more when the template injects a default system
prompt (tens of tokens for Qwen 2.5 or Llama 3.1). The server's ``usage`` wins when sent.

**Unique starts.** Every prompt starts with :data:`TAG_TOKENS` words drawn from the
caller's RNG (40 random bits, 1024⁴ ≈ 10¹² tags), counted in the token budget, so that a
prefix cache cannot serve one request from another's blocks. The body that follows is a
slice at a random offset of a fixed pseudo-random word corpus of 65,536 words, built once
per process; a 2,000-token prompt costs a few microseconds (a slice, not 2,000 draws).

**Shared prefixes.** With a :class:`SharedPrefix` (a group of a class's ``prefix`` option,
:mod:`llmload.workload.prefixes`), the prompt opens with its fixed text, the same for every
request, user and worker process given the same seed and key; the prompt's own tokens (the
unique tag, then the body) follow it. :func:`seeded_words` gives such fixed texts for any
key (the trace replay's blocks use it too).

Everything is deterministic given the RNG's seed.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import random
from array import array
from dataclasses import dataclass

__all__ = ["CORPUS_WORDS", "TAG_TOKENS", "WORDS", "SharedPrefix", "seeded_words", "synthetic_prompt", "warm"]

_WORDS_TEXT = """
able about above accept access account act action active adapt add added address adjust adult after again age
agent ago agree ahead aid aim air album alert align all allow almost alone along already also alter always
amount and animal annual answer any appear apply appoint area arm around art article artist ask aspect assert
assist attempt author auto average avoid award aware away baby back bag balance ball band bank bar base basic
basis bed before begin being below best bet better between big bill birth bit black block blue board body book
boost border born both bottom box boy brain branch brand break bright bring budget build built burn bus but
button buy call came camera camp can cancel cap capital car card care career carry cart case cash cast cat catch
cause cell center central chain change channel charge cheap check child choice choose city civil claim class
clean clear client close cloud club coach code coffee cold collect college color column come comfort command
comment commit common company compare complex concept conduct confirm connect consult contain content context
control convert cook cool copy core corner correct cost could count counter country course cover craft create
credit cross culture cup current custom cut daily dark data date day deal decor deep define degree delay deliver
depend depth design detail detect develop device diet digital dim direct disc display doctor dog domain door
double down draw dream dress drink drive drop dry due dump during dynamic each early earn earth easy eat echo
edge edit editor effect eight either elect element else email empty enable end energy engine ensure enter entry
equal era essay estate even event ever every exact exam example except exist exit expand expect expert export
extra eye fabric face fact factor fair faith fall family far farm fast fat father favor feature fee feed feel
few field fight figure file fill film filter final find finding fine finish fire firm first fish fit five fix
flag flash flat float floor flow fly focus follow food foot force foreign forget form format former forward
found four frame free fresh friend from front full fully fun fund future gain game gas general get gift girl
give glass global goal gold good grand great green ground group grow growth guard guess guide habit hair half
hand handle happy hard hat have head health hear heart heat heavy height held help her here hidden high him his
history hold holiday home hope host hot hotel hour house how however human idea ideal image impact import
include income index inform initial inner input inside install instant invest issue item job join journal jump
just keep key kid kind king know label land large last late later launch law layer lead leader learn least leave
left leg legal length less let letter level library license lie life light like limit line link list listen
little live load loan local lock long look lot love low machine made mail main major make male man manage many
map margin mark market mask mass master match matter maximum may maybe mean measure media medical meet member
memory mental menu mess message metal method middle might mill mind minimum minute miss mission mix mobile mode
model modern modify moment money monitor month more most mother motor mount mouse move movie much music must
name nation nature near need network never new news next nice night none norm normal not note nothing notice now
number nut object odd off offer office often oil old once one online only onto open opening option order organ
origin other our out output outside over overall own owner pack package pad page paint pair panel paper parent
park part partner party pass past path patient pattern pay peace pen people per percent perfect perform perhaps
period permit person pet phone photo pick picture pie piece place plan plant play player please plus point
policy poll pool popular port post pot pour power prefer prepare press pretty prevent price prime print prior
private problem process produce product profile program project proper protect provide public pull pure purpose
push put quality quarter quest queue quick quite radio rain raise random range rank rapid rate rather raw reach
read reader ready real reason receive recent recipe record red reduce refer reflect region regular release
remain remote remove render rent repair replace report request require resolve respect respond rest result
return review rich rid right ring risk road rock role roll room root round route row rule run safe said sale
same sample sand save say scale scene school science scope score screen script sea search season second secret
section sector secure see seek sell send sense series serve service session set setting seven shall shape share
shift ship shop short should show side sign signal similar simple since sing single sit site six size skin sleep
slow small smart smooth social soft solid some son song soon sort sound source space special speed split sport
spot spread spring square staff stage stand star start state station status stay steel step stick still stock
stone stop store story stream street stress strict string strong student study stuff style subject submit
success such suggest sum summer sun super support sure surface sweet switch symbol system table tail take talk
target task tax teacher team tell ten term test text than thank that the theme then there these they thing think
third this those though thought thread three throw thus time tip title today ton too tool top topic total touch
tour town track trade traffic trail train travel tree trip truck true trust truth try turn two type under unique
unit until update upon upper use used user valid value van vehicle version very video view virtual visit visual
voice volume vote wait walk wall want warm watch water way weak wear weather week weight welcome well west what
when where whether which while white who whole whose why wide width wife wild will win wind window winter wire
wish with within without woman wood word work world worth would write writer year yes yet yield young zero
"""
#: Words (each one token with a leading space in the tokenizers named above), sorted.
WORDS: tuple[str, ...] = tuple(_WORDS_TEXT.split())
#: Random words at the start of every prompt that make it unique (10 bits each).
TAG_TOKENS = 4
#: Words in the per-process corpus that prompt bodies are sliced from.
CORPUS_WORDS = 1 << 16
_CORPUS_SEED = 0x6C6C6D6C  # fixed: the corpus is the same in every process and run


@functools.lru_cache(maxsize=1)
def _corpus() -> tuple[str, array]:
    """(text, offsets): text is " w0 w1 ...", word i spans text[offsets[i]:offsets[i + 1]]."""
    words = random.Random(_CORPUS_SEED).choices(WORDS, k=CORPUS_WORDS)
    offsets = array("I", itertools.accumulate((len(w) + 1 for w in words), initial=0))
    return "".join(" " + w for w in words), offsets


def warm() -> None:
    """Build the per-process corpus now (about 30 ms, 0.7 MB) instead of at the first prompt."""
    _corpus()


def _words(rng: random.Random, n: int) -> str:
    """``n`` words from the corpus at a random offset, each with its leading space."""
    if n <= 0:
        return ""
    text, offsets = _corpus()
    whole, n = divmod(n, CORPUS_WORDS)
    start = rng.randrange(CORPUS_WORDS - n + 1)
    return text * whole + text[offsets[start] : offsets[start + n]]


def _tag(rng: random.Random, n: int) -> str:
    bits = rng.getrandbits(10 * TAG_TOKENS)
    return "".join(" " + WORDS[(bits >> (10 * i)) & 1023] for i in range(n))


def seeded_words(key: str, tokens: int) -> str:
    """``tokens`` corpus words, each with its leading space, fixed by ``key`` alone (in any process)."""
    digest = hashlib.sha256(key.encode()).digest()
    return _words(random.Random(int.from_bytes(digest[:16], "big")), tokens)


@dataclass(frozen=True, slots=True)
class SharedPrefix:
    """A fixed opening of ``tokens`` words shared by the prompts of one prefix group."""

    text: str  # words with their leading spaces: " w0 w1 ..."
    tokens: int

    @classmethod
    def build(cls, seed: int, key: str, tokens: int) -> SharedPrefix:
        """The prefix for ``key`` (a class name, or ``name#group``): identical wherever ``seed`` is the same."""
        return cls(seeded_words(f"llmload-shared-prefix:{seed}:{key}", tokens), tokens)


def synthetic_prompt(rng: random.Random, tokens: int, prefix: SharedPrefix | None = None) -> str:
    """``prefix`` (when given), then exactly ``tokens`` words (≥ 1) of its own: the unique tag, then body.

    The prompt's own words start with the :data:`TAG_TOKENS` tag (fewer when ``tokens`` is
    smaller), so it is unique after the prefix; it is ``prefix.tokens + tokens`` words long.
    """
    if tokens < 1:
        raise ValueError(f"a prompt needs at least one token, got {tokens}")
    shared = prefix.text if prefix is not None else ""
    tag = min(tokens, TAG_TOKENS)
    return (shared + _tag(rng, tag) + _words(rng, tokens - tag))[1:]
