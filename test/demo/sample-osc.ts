/** The sample OperatingSystemConfig `make demo` applies, and the one-file change it makes next. */
export function sampleOsc(opts: { readonly greeting: string }): string {
  return `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
metadata: {}
spec:
  type: ""
  purpose: ""
  units:
  - name: kubelet.service
    enable: true
    command: start
    content: |
      [Unit]
      Description=kubelet daemon (demo stand-in)
      [Service]
      ExecStart=/opt/bin/kubelet --config=/var/lib/kubelet/config/kubelet
      [Install]
      WantedBy=multi-user.target
    dropIns:
    - name: 10-extra-args.conf
      content: |
        [Service]
        Environment="KUBELET_EXTRA_ARGS=--v=2"
    filePaths:
    - /var/lib/kubelet/config/kubelet
  - name: greeter.service
    enable: true
    content: |
      [Unit]
      Description=prints the greeting
      [Service]
      Type=oneshot
      ExecStart=/bin/cat /etc/demo/greeting.txt
      [Install]
      WantedBy=multi-user.target
    filePaths:
    - /etc/demo/greeting.txt
  files:
  - path: /var/lib/kubelet/config/kubelet
    permissions: 0600
    content:
      inline:
        data: |
          apiVersion: kubelet.config.k8s.io/v1beta1
          kind: KubeletConfiguration
          cgroupDriver: systemd
  - path: /etc/demo/greeting.txt
    permissions: 0644
    content:
      inline:
        encoding: b64
        data: ${Buffer.from(`${opts.greeting}\n`).toString("base64")}
  - path: /opt/bin/hello
    permissions: 493
    content:
      inline:
        data: |
          #!/bin/sh
          echo hello from the demo
`;
}
