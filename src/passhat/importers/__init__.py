"""Other harnesses' results as passhat runs (`passhat import`), so every command that reads a run reads them.

One module per source format reads its files whole, checks them and returns an ``Imported`` (``common``): the run's
configuration and its trials. Only then is anything written, by ``common.write_run``, through the results store's
own writer: a malformed source leaves nothing behind, and the run reads back exactly as a run passhat ran.

    common.py   Imported, the source's bytes read within bounds, the run's configuration, writing the run
    jsonl.py    the documented JSONL of {task, trial, reward, ...} rows, for any harness
    tau2.py     τ²-bench results (a results.json, or a `tau2 run --save-to` folder with its simulations/)
    inspect.py  Inspect AI eval logs (.eval and .json), read by inspect-ai itself
"""
