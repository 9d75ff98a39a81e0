/**
 * Content of gardener-node-agent.service (spec §6.2), byte for byte, without a trailing newline.
 * The reconcile OSC carries the same text, so the OSC controller sees no change after bootstrap.
 */
export const agentUnitContent = `[Unit]
Description=Gardener Node Agent
After=network-online.target

[Service]
LimitMEMLOCK=infinity
ExecStart=/opt/bin/gardener-node-agent --config-dir=/var/lib/gardener-node-agent
Restart=always
RestartSec=5
StandardOutput=journal+console
StandardError=journal

[Install]
WantedBy=multi-user.target`;
