export type { SystemdAction, SystemdFakeControls } from "./actions.ts";
export { startSystemdDouble, type SystemdDouble, type SystemdDoubleOptions } from "./double.ts";
export { FakeSystemd } from "./fake-systemd.ts";
export type { FakeUnit, UnitSeed } from "./model.ts";
export { writeJournal, type JournalSeed } from "./journal.ts";
