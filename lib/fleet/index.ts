/**
 * `mcp-dual-era/fleet` (Node): replicas of a wrap behind a load balancer, on a Redis shared by the
 * fleet. `joinFleet({ redis })` joins one and hands back the `Fleet` that `wrapLegacyServer` and
 * `wrapModernServer` take as their `fleet` option: the requestState keys every replica opens, the
 * directory of replicas (id, address, heartbeat), single use of replay states fleet-wide, the
 * forwarding of retries and legacy-session requests to the replica that owns them, and the changes
 * told to every replica's listens. Plain calls never touch Redis.
 */
export { joinFleet, type Fleet, type FleetOptions } from './fleet.ts';
