// The package's map (filled in by the client, ledger and worker modules).
export {};
