// Nothing: the baseline module of tests/bench/sdk-pages/empty.html.
export {};
