/** placeholder */
package dev.muster.etcd;
