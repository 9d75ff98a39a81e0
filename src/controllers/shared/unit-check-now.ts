import { Channel, type KubeObject, type Source } from "../../kube/index.ts";

/**
 * The in-process request for a systemd unit check now (issue 25): the OSC controller sends it once it has
 * changed units and written last-applied, so `SystemdUnitsReady` judges the new units at once instead of
 * up to one sync period later (a rollout slot verifying health waits for exactly that judgement).
 * `request` never blocks; requests sent before the unit check subscribes are buffered.
 */
export interface UnitCheckNow {
  /** Generic events carrying the Node's name, the unit check controller's key. */
  readonly source: Source<KubeObject>;
  readonly request: (nodeName: string) => void;
}

export function createUnitCheckNow(): UnitCheckNow {
  // A request is the same key each time: more than a few pending ones say nothing new.
  const channel = new Channel<KubeObject>(4);
  return { source: channel, request: (nodeName) => channel.send({ metadata: { name: nodeName } }) };
}
