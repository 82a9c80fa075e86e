"""What the help says of each command: its line in `attntrace --help`, its own help's first paragraph and
its ending, each paragraph marked for the catalogue on its own (the command line looks each up)."""

from attntrace.language import N_

# what each argument is (the help of FILE and NAME in their commands' lists of arguments)
FILE_OR_X = N_("A problem: a .json file (or a trace written by --format json), a directory of CSV files (x.csv, "
               "w_q.csv, ...), an .npz, or - for JSON on stdin. Without it, the matrices given with --x, else the "
               'built-in worked example of the article "8 steps to self-attention".')
FILE = N_("A problem: a .json file (or a trace written by --format json), a directory of CSV files (x.csv, "
          "w_q.csv, ...), an .npz, or - for JSON on stdin. Without it, the built-in worked example of the article "
          '"8 steps to self-attention".')
FILE_AND_W = N_("A problem: a .json file (or a trace written by --format json), a directory of CSV files (x.csv, "
                "w_q.csv, ...), an .npz, or - for JSON on stdin. Without it, the matrices given with --x (and --w-q, "
                "--w-k, --w-v).")
EXPERIMENTS = N_("One of four experiments: symmetric (W_K used for queries too: every score matrix is symmetric), permute "
                 "(reordered inputs give the same outputs, reordered: no position information), similarity (cosine "
                 "similarity of the tokens' Q, K, V and outputs), temperature (softmax with and without the sqrt(d_k) "
                 "scaling).")

# each command: its line in `attntrace --help`, and what its own --help ends with (each paragraph marked for the
# catalogue on its own: the command line looks each up)
COMMANDS: dict[str, tuple[str, str]] = {
    'run': (N_("The eight steps for every input."),
            N_("Example: attntrace run samples/causal.json --precision 2 > answers.txt")),
    'step': (N_("Steps 4 to 7 for one input."),
             N_("Example: attntrace step samples/scaled.json --input 2")),
    'explain': (N_("Every cell's arithmetic for one input."),
                N_("Example: attntrace explain --input 1")),
    'flash': (N_("The softmax a block of keys at a time, as FlashAttention runs it."),
              N_("Example: attntrace flash samples/causal.json --block 2 --input 3")),
    'experiment': (N_("Run one of four experiments on a problem."),
                   N_("Example: attntrace experiment symmetric samples/scaled.json")),
    'validate': (N_("Check a problem and print its shapes."),
                 N_("Example: attntrace validate samples/two_heads.json")),
    'schema': (N_("Print the JSON Schema of a problem file."), N_("Example: attntrace schema > attntrace.schema.json")),
    'new': (N_("Write a problem with random weights."),
            N_("Example: attntrace new --tokens 3 --d-model 4 --d-k 4 --d-v 4 --seed 1 -o homework.json")),
    'check': (N_("Mark answer sheets, step by step."),
              N_("Examples: attntrace check answers.json samples/scaled.json --gradescope results.json") + "\n\n"
              "attntrace check class/ --problem problem.json --gradebook grades.csv"),
    'worksheet': (N_("An exercise with a blank table for each step."),
                  N_("Example: attntrace worksheet samples/scaled.json --input 2 --precision 2 --key")),
    'assign': (N_("A different problem, worksheet and key per student."),
               N_("Example: attntrace assign roster.txt --seed 7 --heads 2 --mask causal -o class")),
    'bert': (N_("Trace one head of a real BERT model."),
             N_('Example: attntrace bert "The animal didn\'t cross the street because it was too tired" --layer 5 '
                '--head 3 --who')),
    'model': (N_("Trace one head of a local Hugging Face model."),
              N_('Example: attntrace model Qwen/Qwen2-0.5B "The animal didn\'t cross the street because it was too '
                 'tired" --layer 12 --head 3')),
    'explore': (N_("Step through a trace interactively and edit it."),
                N_("Keys: arrows or n/p step, up/down or 1-9 pick the input, Tab and Enter show a cell's arithmetic, e "
                   "edits, u undoes, ? lists every key, q quits.") + "\n\n"
                + N_("Example: attntrace explore samples/scaled.json --input 2")),
    'decode': (N_("Generate token by token against a KV cache."),
               N_("Example: attntrace decode samples/causal.json --window 2 --sinks 1")),
}

# each command's own --help starts with (paragraphs looked up one by one, as the epilogs')
HELP = {
    'run': N_("The eight steps for every input."),
    'step': N_("Steps 4 to 7 for one input, after a reminder of q, K and V."),
    'explain': N_("Every cell's arithmetic for one input, as a student writes it (same as step --explain)."),
    'flash': N_("FlashAttention's online softmax for each query: per block of keys the running maximum m, the rescale "
                "factor, the running sum ℓ and the unnormalised output O, then O / ℓ beside step 7's output."),
    'experiment': N_("Run one of four experiments on a problem: symmetric, permute, similarity or temperature."),
    'validate': N_("Check a problem and print its shapes, without computing anything."),
    'schema': N_("Print the JSON Schema of a problem file."),
    'new': N_("Write a ready-to-edit problem with random weights."),
    'check': N_("Mark answer sheets step by step at the students' precision and name the first mistake.") + "\n\n"
             + N_("Exit 0 when every intermediate asked for is written and right, 1 otherwise, 2 when a sheet, the "
                  "problem or the report cannot be read or written."),
    'worksheet': N_("An exercise: the problem, then a blank table for each step (with --key, the answers)."),
    'assign': N_("Write a different problem, worksheet and key for every student of a roster.") + "\n\n"
              + N_("The keys go apart, in the class folder's keys/ folder; a file already there (a worksheet filled in) "
                   "is never replaced: a second run writes only what is missing, such as a new student's folder."),
    'bert': N_("Trace one head of a real BERT-family model on a sentence (numpy only; no torch, no network)."),
    'model': N_("Trace one head of a local Hugging Face model (BERT, GPT-2, Llama, Qwen2, Mistral or Gemma 2) on a sentence, "
                "in numpy (no torch, no network)."),
    'explore': N_("Step through a trace in the terminal: go back, follow an input, see a cell's arithmetic, edit a "
                  "number."),
    'decode': N_("Decode a self-attention problem token by token with a KV cache (with --window, a rolling buffer; "
                 "with --sinks, StreamingLLM's sink tokens): each step's cache, weights, output and cost, checked "
                 "against causal attention over the whole sequence."),
}
