/** An authenticated caller, as the authenticators hand it to authorization and admission. */
export interface UserInfo {
  readonly name: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  /** e.g. `authentication.kubernetes.io/credential-id` of x509 and service-account credentials. */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export const anonymousUser: UserInfo = { name: "system:anonymous", groups: ["system:unauthenticated"] };
