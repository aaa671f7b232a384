"""Token counts measured by Llama 3's tokenizer (llama3-tokenizer-js, pinned in vendor.toml) on the
texts in content/samples/. Written by tools/measure_tokens.py; every build measures again and stops
if this file is stale. Never edit by hand."""

# sample: (characters, words or None where words are not spaced, tokens)
SAMPLES = {'english': (1486, 273, 319), 'french': (1678, 295, 459), 'chinese': (456, None, 400), 'python': (3352, 326, 770)}

# (tokens of the English sample in Llama 3.1's chat template, tokens of the sample alone,
#  tokens of the template's system block, tokens of its assistant cue)
CHAT_TEMPLATE = (354, 319, 26, 4)

# (text, ((token id, bytes of the token), ...))
STREAM = ('Llamas 🦙 love naïve café', ((43, (76,)), (24705, (108, 97, 109)), (300, (97, 115)), (11410, (32, 240, 159)), (99, (166,)), (247, (153,)), (3021, (32, 108, 111, 118, 101)), (95980, (32, 110, 97, 195, 175)), (588, (118, 101)), (53050, (32, 99, 97, 102, 195, 169))))
